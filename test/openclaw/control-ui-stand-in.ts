/** @module A stand-in for OpenClaw's gateway in front of the plugin's routes: its Control UI tab frame, its frame cookie, its gateway auth on the inspector's route. */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import openclawPlugin from "../../src/openclaw/index.js";
import { INSPECTOR_PATH } from "../../src/openclaw/inspector-tab.js";
import { type FakeOpenClaw, fakeOpenClaw } from "../helpers/fake-openclaw-api.js";
import { postUnescaped } from "../helpers/raw-http.js";

export const HOOK_TOKEN = "oc-frame-hook-token-0123456789abcdef";
export const GATEWAY_TOKEN = "oc-frame-gateway-token-fedcba9876543210";

/** Markup a sender controls, in one string: a script, an attribute break-out with an image, a textarea end, a javascript: URL. */
export const HOSTILE = `<script>window.pwned=1</script>"><img src=x onerror=window.pwned=2>'</textarea>javascript:window.pwned=3`;

export interface StandIn {
  url: string;
  fake: FakeOpenClaw;
  /** The cookie OpenClaw mints for the frame, as a request header, for tests without a browser. */
  frameCookie: string;
  /** Sends to the intake with node:http, which leaves `<`, `>` and quotes in the path as they are. */
  send(
    pathAndQuery: string,
    body: string,
    headers?: Record<string, string>,
  ): Promise<{ status: number; requestId: string }>;
  close(): Promise<void>;
}

/**
 * What OpenClaw 2026.9.6 does around a plugin's routes, as far as the tab goes: `GET /` is the Control UI, whose tab
 * frames the inspector's route in `<iframe sandbox="allow-scripts">` after its authenticated bootstrap set an
 * HttpOnly cookie for that route (SameSite=None, as the frame is cross-site for cookies). On the inspector's route
 * the cookie admits GET and HEAD only, the gateway token anything; without either, a plain-text 401. The intake's
 * routes take no gateway auth.
 */
export async function startControlUiStandIn(): Promise<StandIn> {
  const fake = fakeOpenClaw({
    pluginConfig: {
      enabled: true,
      token: HOOK_TOKEN,
      path: "/intake",
      mappings: [
        {
          id: "deploy",
          match: { path: "deploy" },
          action: "wake",
          textTemplate: "Deployed {{payload.service}}",
        },
        {
          id: `evil-${HOSTILE}`,
          match: { path: "evil" },
          action: "wake",
          textTemplate: "evil {{payload.a}}",
        },
      ],
    },
  });
  openclawPlugin.register(fake.api);
  for (const service of fake.services) await service.start?.({});
  const grant = randomBytes(16).toString("hex");
  const frameCookie = `oc-frame-grant=${grant}`;

  const admitted = (req: IncomingMessage) => {
    if (req.headers.authorization === `Bearer ${GATEWAY_TOKEN}`) return true;
    const cookies = (req.headers.cookie ?? "").split(/;\s*/);
    return cookies.includes(frameCookie) && (req.method === "GET" || req.method === "HEAD");
  };

  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (path === "/") {
      res.setHeader(
        "Set-Cookie",
        `${frameCookie}; Path=${INSPECTOR_PATH}; HttpOnly; Secure; SameSite=None; Max-Age=300`,
      );
      res.setHeader("Content-Type", "text/html; charset=utf-8");
      res.end(`<!doctype html><title>Control UI</title>
<iframe id="tab" sandbox="allow-scripts" src="${INSPECTOR_PATH}" style="width:1300px;height:900px"></iframe>`);
      return;
    }
    for (const route of fake.routes) {
      if (path !== route.path && !path.startsWith(`${route.path}/`)) continue;
      if (route.auth === "gateway" && !admitted(req)) {
        res.writeHead(401, { "Content-Type": "text/plain; charset=utf-8" }).end("Unauthorized");
        return;
      }
      if (await route.handler(req, res)) return;
    }
    res.writeHead(404).end("not found");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    fake,
    frameCookie,
    send(pathAndQuery, body, headers = { authorization: `Bearer ${HOOK_TOKEN}` }) {
      return postUnescaped(url, pathAndQuery, body, headers);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const service of fake.services) await service.stop?.({});
    },
  };
}
