-- The audit chain's statement-level triggers (0012) plan their statements for the tables as they
-- are at each call. PL/pgSQL keeps a statement's plan for the session, and a generic plan made
-- while audit_seals was small scanned it whole for every sealed row: the link check of a
-- 2,000-row batch took 3 s once the chain held 20,000 rows, and a backlog of 7,000 entries took
-- 20 s to seal. These run once per batch, so planning each time costs nothing that matters.
ALTER FUNCTION audit_seals_take_pending() SET plan_cache_mode = force_custom_plan;
ALTER FUNCTION audit_entries_delete_anchored_only() SET plan_cache_mode = force_custom_plan;
ALTER FUNCTION audit_seals_delete_prefix_only() SET plan_cache_mode = force_custom_plan;
ALTER FUNCTION audit_chain_anchors_prefix_gone() SET plan_cache_mode = force_custom_plan;
