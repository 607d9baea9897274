/** @module Test harness: a loopback stand-in for the Telegram Bot API, enough for OpenClaw's bundled telegram channel to long-poll a DM and send its reply, with every send recorded. */
import { randomBytes } from "node:crypto";
import http from "node:http";
import { AwaitedLog } from "./awaited-log.js";
import { listenOnLoopback, readBody, sendJson } from "./loopback-stub.js";

/** The longest a getUpdates call is held: short, so stopping a gateway never waits on a poll. */
const MAX_POLL_MS = 1_000;
/** The bot the stub answers as (getMe, the `from` of what it sends). */
const BOT = {
  id: 7_000_000_001,
  is_bot: true,
  first_name: "Stub bot",
  username: "stub_hooks_bot",
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
  // Without topics a DM keeps its plain session key (see OpenClaw's Telegram threads-and-sessions page).
  has_topics_enabled: false,
} as const;
/** Methods that send or change a message in a chat: recorded in `sent`. */
const SEND_METHODS = new Set(["sendMessage", "sendChatAction", "editMessageText"]);
/** Methods answered with a plain `true` and not worth recording as unknown. */
const ACK_METHODS = new Set([
  "deleteWebhook",
  "setMyCommands",
  "deleteMyCommands",
  "setMyDescription",
  "setMyShortDescription",
  "setChatMenuButton",
  "setMessageReaction",
  "sendChatAction",
]);

export interface TelegramSend {
  method: string;
  /** `chat_id` as sent, as a string (grammY may send a number or a string). */
  chatId: string;
  /** The message text (`text`), or undefined for a send without one (a chat action). */
  text: string | undefined;
  /** The whole parameter object, for a failure message. */
  params: Record<string, unknown>;
}

export interface StubTelegram {
  /** What `channels.telegram.apiRoot` takes: e.g. `http://127.0.0.1:41234`, without `/bot<token>`. */
  readonly apiRoot: string;
  /** A token in Telegram's shape (`<digits>:<secret>`); requests with another token get a 401. */
  readonly token: string;
  /** Queues a private message from user `chatId` (a DM: the chat id is the user id) for the next getUpdates. */
  sendUserMessage(chatId: number, text: string): void;
  /** Every send, edit and chat action, in arrival order. */
  readonly sent: TelegramSend[];
  /** Methods the stub does not implement (answered `true`), in arrival order: what to add when OpenClaw changes. */
  readonly unknown: string[];
  /** How many times each method was called. */
  readonly calls: Map<string, number>;
  /** Resolves with the first send (already made or still to come) that passes `predicate`. */
  waitForSent(predicate: (send: TelegramSend) => boolean, timeoutMs: number): Promise<TelegramSend>;
  close(): Promise<void>;
}

interface Update {
  update_id: number;
  message: Record<string, unknown>;
}

interface Poll {
  offset: number;
  limit: number;
  answer: (updates: Update[]) => void;
}

/**
 * grammY sends text methods as JSON; the Bot API also takes form bodies and query strings. Multipart (file
 * uploads) is not parsed: a text reply never needs it, and such a call still shows in `calls`.
 */
function parseParams(req: http.IncomingMessage, url: URL, raw: Buffer): Record<string, unknown> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  const type = req.headers["content-type"] ?? "";
  const text = raw.toString("utf8");
  if (type.startsWith("application/json") && text !== "") return { ...params, ...JSON.parse(text) };
  if (type.startsWith("application/x-www-form-urlencoded")) {
    return { ...params, ...Object.fromEntries(new URLSearchParams(text)) };
  }
  return params;
}

/** A whole number from a Bot API parameter (grammY sends numbers; a form or query sends strings). */
function intParam(value: unknown, fallback: number): number {
  const number = typeof value === "string" ? Number(value) : value;
  return typeof number === "number" && Number.isFinite(number) ? Math.trunc(number) : fallback;
}

export async function startStubTelegram(): Promise<StubTelegram> {
  const token = `${7_000_000_001}:${randomBytes(18).toString("base64url")}`;
  const log = new AwaitedLog<TelegramSend>("stub Telegram");
  const sent = log.items;
  const unknown: string[] = [];
  const calls = new Map<string, number>();
  const updates: Update[] = [];
  const polls = new Set<Poll>();
  let nextUpdateId = 1;
  let nextMessageId = 1;
  let closed = false;

  const pending = (offset: number, limit: number) =>
    updates.filter((update) => update.update_id >= offset).slice(0, limit);

  const wakePolls = (): void => {
    for (const poll of [...polls]) {
      const ready = pending(poll.offset, poll.limit);
      if (ready.length > 0) poll.answer(ready);
    }
  };

  const record = (send: TelegramSend): void => log.push(send);

  const message = (chatId: string, text: unknown) => ({
    message_id: nextMessageId++,
    date: Math.floor(Date.now() / 1000),
    chat: { id: Number(chatId), type: "private", first_name: "Test user" },
    from: { id: BOT.id, is_bot: true, first_name: BOT.first_name, username: BOT.username },
    ...(typeof text === "string" ? { text } : {}),
  });

  const getUpdates = (params: Record<string, unknown>, res: http.ServerResponse): void => {
    const offset = intParam(params["offset"], 0);
    const limit = intParam(params["limit"], 100);
    // A positive offset confirms every update below it, as Telegram forgets them.
    if (offset > 0) {
      const kept = updates.findIndex((update) => update.update_id >= offset);
      updates.splice(0, kept === -1 ? updates.length : kept);
    }
    const ready = pending(offset, limit);
    const holdMs = Math.min(intParam(params["timeout"], 0) * 1000, MAX_POLL_MS);
    if (ready.length > 0 || holdMs <= 0 || closed) {
      sendJson(res, 200, { ok: true, result: ready });
      return;
    }
    const poll: Poll = {
      offset,
      limit,
      answer: (result) => {
        polls.delete(poll);
        clearTimeout(timer);
        sendJson(res, 200, { ok: true, result });
      },
    };
    const timer = setTimeout(() => poll.answer([]), holdMs);
    polls.add(poll);
    res.once("close", () => {
      polls.delete(poll);
      clearTimeout(timer);
    });
  };

  /** The `result` of a method other than getUpdates. */
  const resultOf = (method: string, params: Record<string, unknown>): unknown => {
    const chatId = String(params["chat_id"] ?? "");
    switch (method) {
      case "getMe":
        return BOT;
      case "getWebhookInfo":
        return { url: "", has_custom_certificate: false, pending_update_count: 0 };
      case "getMyCommands":
        return [];
      case "sendMessage":
        return message(chatId, params["text"]);
      case "editMessageText":
        return {
          ...message(chatId, params["text"]),
          message_id: intParam(params["message_id"], 0),
          edit_date: Math.floor(Date.now() / 1000),
        };
      default:
        if (!ACK_METHODS.has(method)) unknown.push(method);
        return true;
    }
  };

  const answer = (method: string, params: Record<string, unknown>, res: http.ServerResponse): void => {
    calls.set(method, (calls.get(method) ?? 0) + 1);
    if (method === "getUpdates") {
      getUpdates(params, res);
      return;
    }
    if (SEND_METHODS.has(method)) {
      const text = typeof params["text"] === "string" ? params["text"] : undefined;
      record({ method, chatId: String(params["chat_id"] ?? ""), text, params });
    }
    sendJson(res, 200, { ok: true, result: resultOf(method, params) });
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const route = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!route) {
      sendJson(res, 404, { ok: false, error_code: 404, description: "Not Found" });
      return;
    }
    if (decodeURIComponent(route[1]!) !== token) {
      sendJson(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
      return;
    }
    const method = route[2]!;
    readBody(req).then(
      (raw) => {
        let params: Record<string, unknown>;
        try {
          params = parseParams(req, url, raw);
        } catch {
          sendJson(res, 400, { ok: false, error_code: 400, description: "Bad Request: can't parse JSON" });
          return;
        }
        answer(method, params, res);
      },
      () => res.destroy(),
    );
  });

  const port = await listenOnLoopback(server);

  return {
    apiRoot: `http://127.0.0.1:${port}`,
    token,
    sent,
    unknown,
    calls,
    sendUserMessage(chatId, text) {
      const user = { id: chatId, is_bot: false, first_name: "Test user", username: `user${chatId}` };
      updates.push({
        update_id: nextUpdateId++,
        message: {
          message_id: nextMessageId++,
          date: Math.floor(Date.now() / 1000),
          chat: { id: chatId, type: "private", first_name: user.first_name, username: user.username },
          from: user,
          text,
        },
      });
      wakePolls();
    },
    waitForSent(predicate, timeoutMs) {
      return log.waitFor(predicate, timeoutMs, () => {
        const seenSends = sent.map((send) => `${send.method} ${send.chatId} ${JSON.stringify(send.text)}`);
        return `no matching Telegram send within ${timeoutMs} ms; calls: ${JSON.stringify(
          Object.fromEntries(calls),
        )}; sends: ${JSON.stringify(seenSends)}`;
      });
    },
    async close() {
      closed = true;
      for (const poll of [...polls]) poll.answer([]);
      log.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
