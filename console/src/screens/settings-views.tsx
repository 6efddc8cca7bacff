// The settings screens' views, one link each, the current one marked.
/** The settings views: General, Delivery & limits (settings-delivery.tsx), Identity providers, Sign-in (settings-sign-in.tsx), Email (settings-email.tsx), Chat alerts (settings-alerts.tsx), Import and export (settings-portability.tsx). */
export function SettingsViews({
  current,
}: {
  current: "general" | "delivery" | "identity" | "sign-in" | "email" | "alerts" | "portability";
}) {
  return (
    <nav class="views" aria-label="Settings views">
      <a href="#/settings" aria-current={current === "general" ? "page" : undefined}>
        General
      </a>
      <a href="#/settings/delivery" aria-current={current === "delivery" ? "page" : undefined}>
        Delivery &amp; limits
      </a>
      <a href="#/settings/identity" aria-current={current === "identity" ? "page" : undefined}>
        Identity providers
      </a>
      <a href="#/settings/sign-in" aria-current={current === "sign-in" ? "page" : undefined}>
        Sign-in
      </a>
      <a href="#/settings/email" aria-current={current === "email" ? "page" : undefined}>
        Email
      </a>
      <a href="#/settings/alerts" aria-current={current === "alerts" ? "page" : undefined}>
        Chat alerts
      </a>
      <a href="#/settings/portability" aria-current={current === "portability" ? "page" : undefined}>
        Import and export
      </a>
    </nav>
  );
}
