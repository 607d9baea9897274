import { afterEach, describe, expect, it } from "vitest";
import { createHooksPlugin } from "../../src/index.js";
import { post, startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "test-token-0123456789abcdefghij";
let host: TestHost;
afterEach(async () => host?.close());

describe("smoke", () => {
  it("wake and agent", async () => {
    host = await startTestHost(createHooksPlugin(), { hooks: { enabled: true, token: TOKEN } });
    const auth = { authorization: `Bearer ${TOKEN}` };
    const wake = await post(`${host.url}/hooks/wake`, { text: "hello" }, auth);
    expect(wake.status).toBe(200);
    const agent = await post(`${host.url}/hooks/agent`, { message: "hi" }, auth);
    expect(agent.status).toBe(202);
    console.log(wake.body, agent.body, host.events.map((e) => e.event));
  });
});
