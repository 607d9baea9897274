/** @module Built-in mappings enabled by `hooks.presets`; `mailbox` is the one preset. */
import * as v from "valibot";
import { objectMessage } from "../actions/action-schemas.js";
import { MAX_MAPPING_BODY_BYTES, type MappingInput } from "../config/mapping-schema.js";
import type { MailboxConfig } from "../config/schema.js";

/** At most this many actions come out of one request (forEach fan-out). */
export const MAX_FAN_OUT = 200;

/** Room for one message's headers, snippet and JSON framing besides its body. */
const MAILBOX_MESSAGE_OVERHEAD_BYTES = 4_096;

export const MailboxBodySchema = v.object(
  {
    source: v.string("source must be a string"),
    messages: v.array(
      v.object(
        {
          id: v.optional(v.string("id must be a string")),
          from: v.string("from must be a string"),
          subject: v.string("subject must be a string"),
          snippet: v.string("snippet must be a string"),
          body: v.optional(v.string("body must be a string")),
        },
        objectMessage("each message must be an object with from, subject and snippet"),
      ),
      "messages must be an array",
    ),
  },
  objectMessage("the mailbox body must be a JSON object"),
);
export type MailboxBody = v.InferOutput<typeof MailboxBodySchema>;

export interface PresetDefinition {
  mapping: MappingInput;
  bodySchema?: v.GenericSchema;
  contentSource: "Webhook" | "Email";
  /**
   * The preset's session key is its author's (the operator turned the preset on), not the caller's; a payload
   * that lacks the part it is built from gets a fresh key instead of one shared by every such payload.
   */
  sessionKeyPrefix?: string;
}

/** The mailbox preset: one agent turn per message, keyed by the message id. */
export function mailboxPreset(mailbox: MailboxConfig | undefined): PresetDefinition {
  const perMessage = (mailbox?.maxBytes ?? 20_000) * 2 + MAILBOX_MESSAGE_OVERHEAD_BYTES;
  const mapping: MappingInput = {
    id: "mailbox",
    match: { path: "mailbox" },
    action: "agent",
    wakeMode: "now",
    name: "Mailbox",
    forEach: "messages",
    sessionKey: "hook:mailbox:{{messages[0].id}}",
    messageTemplate:
      "New email from {{messages[0].from}}\nSubject: {{messages[0].subject}}\n{{messages[0].snippet}}\n{{messages[0].body}}",
    // A full batch fits: the fan-out limit of messages, each at its body cap (UTF-8 may double escaped bytes).
    maxBodyBytes: Math.min(MAX_MAPPING_BODY_BYTES, perMessage * MAX_FAN_OUT),
    allowUnsafeExternalContent: mailbox?.allowUnsafeExternalContent ?? false,
  };
  if (mailbox?.model) mapping.model = mailbox.model;
  if (mailbox?.thinking) mapping.thinking = mailbox.thinking;
  return {
    mapping,
    bodySchema: MailboxBodySchema,
    contentSource: "Email",
    sessionKeyPrefix: "hook:mailbox:",
  };
}

export function presetDefinition(name: "mailbox", mailbox: MailboxConfig | undefined): PresetDefinition {
  switch (name) {
    case "mailbox":
      return mailboxPreset(mailbox);
  }
}
