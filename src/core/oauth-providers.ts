// The OAuth identity providers edgeplane signs users in with, by the names the API gives them. In
// core because both the settings (config.ts: a provider's host, the server's own applications) and
// the `oauth` module's definition name them, and config sits below the modules.
export const OAUTH_PROVIDERS = ['github', 'facebook', 'microsoft', 'google', 'linkedin', 'gitlab', 'twitch', 'amazon'] as const;
export type OAuthProvider = (typeof OAUTH_PROVIDERS)[number];
