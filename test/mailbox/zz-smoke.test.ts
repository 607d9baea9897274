import { ImapFlow } from "imapflow";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DovecotServer, startDovecot } from "../helpers/dovecot.js";

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
  await server.addUser("alice", "secret");
});
afterAll(async () => server?.close());

it("works", async () => {
  const uids = await server.append("alice", "INBOX", [{ subject: "hi", text: "hello" }]);
  console.log(uids, await server.status("alice", "INBOX"));
  const v1 = await server.recreateMailbox("alice", "Box");
  const v2 = await server.recreateMailbox("alice", "Box");
  console.log(v1, v2);
  const bad = new ImapFlow({ host: "127.0.0.1", port: server.port, secure: false, doSTARTTLS: false, auth: { user: "alice", pass: "nope" }, logger: false });
  bad.on("error", () => {});
  const err = await bad.connect().catch((e) => e);
  console.log("AUTH", err, Object.keys(err), err.authenticationFailed, err.serverResponseCode, err.response);
  const c = new ImapFlow({ host: "127.0.0.1", port: server.port, secure: false, doSTARTTLS: false, auth: { user: "alice", pass: "secret" }, logger: false });
  c.on("error", () => {});
  await c.connect();
  const e2 = await c.mailboxOpen("Nope").catch((e) => e);
  console.log("OPEN", e2, Object.keys(e2), e2.serverResponseCode, e2.responseText);
  const mb = await c.mailboxOpen("INBOX");
  console.log(mb.uidValidity, mb.uidNext, mb.exists);
  const closed = new Promise((r) => c.once("close", r));
  await server.restart();
  await closed;
  console.log("closed after restart");
  const refused = new ImapFlow({ host: "127.0.0.1", port: 1, secure: false, auth: { user: "a", pass: "b" }, logger: false });
  refused.on("error", () => {});
  const e3 = await refused.connect().catch((e) => e);
  console.log("REFUSED", e3, e3.code);
  expect(uids).toEqual([1]);
});
