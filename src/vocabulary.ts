/** @module The shared vocabulary: channels (with aliases and recipient kinds), wake modes, thinking levels. */
import * as v from "valibot";

/** Channels a reply can be delivered to; `last` is resolved by the delivery subsystem. */
export const CHANNEL_IDS = [
  "whatsapp",
  "telegram",
  "discord",
  "slack",
  "mattermost",
  "signal",
  "imessage",
  "msteams",
] as const;
export type ChannelId = (typeof CHANNEL_IDS)[number];

export const WakeModeSchema = v.picklist(["now", "next-heartbeat"]);
export type WakeMode = v.InferOutput<typeof WakeModeSchema>;

/** `isolated`: each agent turn starts afresh; `persistent`: the turns of one session key continue one conversation. */
export const SESSION_MODES = ["isolated", "persistent"] as const;
export const SessionModeSchema = v.picklist(SESSION_MODES, 'sessionMode must be "isolated" or "persistent"');
export type SessionMode = v.InferOutput<typeof SessionModeSchema>;

export const ThinkingSchema = v.picklist(["off", "minimal", "low", "medium", "high", "xhigh"]);
export type Thinking = v.InferOutput<typeof ThinkingSchema>;

const ALIASES: Record<string, string> = { imsg: "imessage", teams: "msteams" };

const E164 = /^\+[1-9]\d{6,14}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

interface RecipientKind {
  describe: string;
  test(to: string): boolean;
}

/** What `to` must look like for each channel; `last` is checked by the delivery subsystem that resolves it. */
const RECIPIENT_KINDS: Record<ChannelId, RecipientKind> = {
  whatsapp: { describe: "an E.164 phone number such as +15551234567", test: (to) => E164.test(to) },
  signal: { describe: "an E.164 phone number such as +15551234567", test: (to) => E164.test(to) },
  telegram: {
    describe: "a chat id (an integer such as -1001234567890) or @username",
    test: (to) => /^-?\d{1,20}$/.test(to) || /^@[A-Za-z][A-Za-z0-9_]{3,31}$/.test(to),
  },
  discord: { describe: "a channel id (a numeric snowflake)", test: (to) => /^\d{15,21}$/.test(to) },
  slack: { describe: "a channel id such as C0123456789", test: (to) => /^[CDG][A-Z0-9]{6,}$/.test(to) },
  mattermost: {
    describe: "a channel id (26 lower-case letters and digits)",
    test: (to) => /^[a-z0-9]{26}$/.test(to),
  },
  imessage: {
    describe: "a phone number (E.164) or an e-mail handle",
    test: (to) => E164.test(to) || EMAIL.test(to),
  },
  msteams: {
    describe: "a conversation id such as 19:abc@thread.tacv2",
    test: (to) => /^(19|a|8|29):\S+$/.test(to),
  },
};

export type ChannelCheck =
  | { ok: true; channel: string }
  | { ok: false; field: "channel" | "to"; message: string };

/** Resolves aliases and checks the channel is offered and `to` has the channel's recipient kind. */
export function checkChannel(
  requested: string,
  to: string | undefined,
  offered: ReadonlySet<string>,
): ChannelCheck {
  const lowered = requested.toLowerCase();
  const channel = ALIASES[lowered] ?? lowered;
  if (channel === "last") return { ok: true, channel };
  if (!offered.has(channel)) {
    return {
      ok: false,
      field: "channel",
      message: `channel "${requested}" is not offered here; use "last" or one of: ${[...offered].join(", ")}`,
    };
  }
  const kind = RECIPIENT_KINDS[channel as ChannelId];
  if (to !== undefined && kind && !kind.test(to)) {
    return { ok: false, field: "to", message: `to must be ${kind.describe} for channel ${channel}` };
  }
  return { ok: true, channel };
}
