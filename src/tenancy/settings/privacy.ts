// What erasing a reader does to their comments (docs/privacy.md).
import { z } from "zod";
import { group, setting } from "./define.js";

export const privacySettings = {
  privacy: group(
    { name: "PrivacySettings" },
    {
      erasure: setting(z.enum(["anonymize", "delete"]), {
        default: "anonymize",
        enumType: { name: "ErasureMode" },
        description:
          "Erasing a reader: anonymize (default) keeps their comments with the body replaced and no author; delete removes them (docs/privacy.md).",
      }),
    },
  ),
};
