// The tenant's email (contract section 15): sender, reply address, the daily digest's hour, readers'
// default, the per-reader cap, the tenant's own SMTP server.
import { z } from "zod";
import { isSingleLine, SINGLE_LINE_RULE } from "../../lib/single-line.js";
import { group, sealed, setting } from "./define.js";
import { outboundUrl } from "./rules.js";

/** How often a reader hears of replies by email (contract section 15). */
export const REPLY_EMAIL_CHOICES = ["immediate", "daily", "off"] as const;
export type ReplyEmails = (typeof REPLY_EMAIL_CHOICES)[number];

/** The GraphQL enum of REPLY_EMAIL_CHOICES (the settings' default, a reader's own choice). */
export const REPLY_EMAILS_ENUM = {
  name: "ReplyEmails",
  description: "How often a reader hears of replies by email: each within minutes, in a daily digest, or not at all.",
};

const emailAddress = z.string().max(320).email("must be an email address");

/** What a PATCH may send as `email.smtpUrl`: smtp(s)://[user:password@]host[:port] and nothing else, or null to use the service's. */
export const smtpUrlPatch = setting(outboundUrl("smtp").nullable(), {
  patchDescription: "smtp://user:password@host:587 or smtps://…, stored encrypted; null: the service's SMTP_URL.",
  label: "SMTP server",
  help: "The tenant's own SMTP server (smtp:// or smtps://), stored encrypted; its password is shown masked. Empty: the service's.",
});

export const EmailSchema = group(
  {
    name: "EmailSettings",
    description: "The tenant's email (contract section 15).",
    patchOnly: { smtpUrl: smtpUrlPatch },
    computed: {
      smtpUrl: {
        type: "String",
        nullable: true,
        description: "The tenant's own SMTP server, its password masked; null: the service's (SMTP_URL).",
      },
    },
  },
  {
    /** "Name <address>" or an address; null: the service's own sender */
    from: setting(
      z
        .string()
        .max(400)
        .refine(isSingleLine, SINGLE_LINE_RULE)
        .refine((v) => /^[^<>]*<[^\s<>@]+@[^\s<>@]+>$|^[^\s<>@]+@[^\s<>@]+$/.test(v.trim()), "must be an address or Name <address>")
        .nullable(),
      {
        default: null,
        description: 'The sender ("Name <address>" or an address); null: the service\'s own.',
        patchDescription: 'An address or "Name <address>"; null: the service\'s own.',
        label: "From",
        help: "An address or Name <address>. Empty: the service's own sender.",
      },
    ),
    replyTo: setting(emailAddress.refine(isSingleLine, SINGLE_LINE_RULE).nullable(), {
      default: null,
      description: "Where replies to the emails go; null: nowhere.",
      patchDescription: "An address; null: none.",
      label: "Reply-to",
      help: "Where readers' answers to the emails go. Empty: nowhere.",
    }),
    /** the hour (0–23, UTC) the daily digests go out */
    digestHour: setting(z.number().int().min(0).max(23), {
      default: 7,
      description: "The hour (0–23, UTC) the daily digests go out.",
      patchDescription: "0–23 (UTC).",
      label: "Digest hour (UTC)",
      help: "0 to 23: the hour daily digests go out.",
    }),
    /** how often a reader who has not chosen hears of replies */
    defaultReplies: setting(z.enum(REPLY_EMAIL_CHOICES), {
      default: "off",
      enumType: REPLY_EMAILS_ENUM,
      description: "How often a reader who has not chosen hears of replies (default off: readers opt in).",
      label: "Default for readers",
      help: "How often a reader who has not chosen hears of replies to their comments.",
    }),
    /** at most this many emails to one reader in any 24 hours; replies past it are not mailed */
    maxPerReaderPerDay: setting(z.number().int().min(1).max(1000), {
      default: 20,
      description: "At most this many emails to one reader in any 24 hours (default 20); replies past it are not mailed.",
      patchDescription: "1–1000.",
      label: "Daily limit per reader",
      help: "1 to 1000 emails to one reader in any 24 hours; replies past it are not mailed.",
    }),
    /**
     * The tenant's own SMTP server, sealed with the app's SecretBox (src/modules/email/smtp-url.ts):
     * set by a PATCH of `email.smtpUrl`, answered with its password masked, never stored in clear.
     */
    smtpUrlEnc: sealed(z.string().optional()),
  },
);

export const emailSettings = { email: EmailSchema };
