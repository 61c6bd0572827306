// Single sign-on in the console: the page the identity provider sends the browser back to.
export { SsoPage } from './SsoPage';
export { AfterSsoSignIn } from './after-sign-in';
