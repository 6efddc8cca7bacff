export const CAPABILITIES = [
  "moderate_content",
  "manage_settings",
  "manage_api_keys",
  "manage_webhooks",
  "view_analytics",
  "manage_readers",
] as const;

export type Capability = (typeof CAPABILITIES)[number];

export const isCapability = (v: string): v is Capability => (CAPABILITIES as readonly string[]).includes(v);
