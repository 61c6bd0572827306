// LIKE patterns for API.md §4's literal substring filters: %, _ and \ in the search match
// themselves (backslash is PostgreSQL's default LIKE escape).
export function substringPattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, '\\$&')}%`;
}
