/**
 * @module Bench transform: fixtures/transforms/github-push.ts written as a user's transform is, with types
 * only from the package (`import type` is erased, so jiti loads no second copy of the plugin).
 */
import type { HookTransform } from "../../src/index.js";

interface Commit {
  id: string;
  message: string;
  author: { name: string };
}

interface PushPayload {
  ref: string;
  repository: { full_name: string };
  pusher: { name: string };
  commits: Commit[];
}

function firstOf<T>(items: readonly T[], fallback: T): T {
  return items.length > 0 ? items[0]! : fallback;
}

const transform: HookTransform<PushPayload> = ({ payload, mapping }) => {
  const branch = payload.ref.replace(/^refs\/heads\//, "");
  if (branch.startsWith("dependabot/")) return null;
  const head = firstOf<Commit>(payload.commits, {
    id: "",
    message: "(no commits)",
    author: { name: "nobody" },
  });
  return {
    kind: "agent",
    name: "GitHub",
    sessionKey: `hook:github:${payload.repository.full_name}`,
    message: `${payload.pusher.name} pushed ${payload.commits.length} commit(s) to ${payload.repository.full_name}@${branch}: ${head.message} [${mapping.id}]`,
  };
};

export default transform;
