// Asks the assistant one question the way a page using the ai package's
// useChat does, and prints as JSON what the package made of the answer.
//
//   ASSISTANT_KEY=... node ask.mjs URL QUESTION [CURRENT_PATH]
//
// The request goes through the package's DefaultChatTransport (the
// transport useChat uses): its body, its fetch, and its parsing of the
// response, which validates every chunk against the package's schema of
// the UI message stream and fails on the first it refuses. The chunks then
// go through readUIMessageStream, which builds the message as useChat
// shows it, and fails on a chunk out of order (a delta of a text never
// started, an output of a tool never called).
//
// It prints one JSON object on a line (the response's status and headers, the
// chunks' types in order, the finish chunk, the message's text, its tool
// parts, its metadata, and the error, null when there was none) and exits
// 1 when there was an error, 0 otherwise.
import { DefaultChatTransport, getToolName, isTextUIPart, isToolUIPart, readUIMessageStream } from "ai";

const [url, question, currentPath = "/"] = process.argv.slice(2);
if (!url || !question || !process.env.ASSISTANT_KEY) {
  console.error("usage: ASSISTANT_KEY=... node ask.mjs URL QUESTION [CURRENT_PATH]");
  process.exit(2);
}

const seen = {
  status: null,
  headers: {},
  chunks: [],
  finish: null,
  text: "",
  tools: [],
  metadata: null,
  error: null,
};

// The transport gives the stream, not the response: its fetch is wrapped
// to keep what the response said besides.
async function fetchAndKeep(input, init) {
  const response = await fetch(input, init);
  seen.status = response.status;
  for (const name of ["content-type", "cache-control", "x-vercel-ai-ui-message-stream", "x-accel-buffering", "x-thread-id"]) {
    seen.headers[name] = response.headers.get(name);
  }
  // The thread's key is a secret: whether it came is enough.
  seen.headers["x-thread-key-present"] = response.headers.has("x-thread-key");
  return response;
}

const transport = new DefaultChatTransport({
  api: url,
  headers: { Authorization: `Bearer ${process.env.ASSISTANT_KEY}` },
  // The hosted assistant's fields, which useChat sends beside its own
  // (id, messages, trigger, messageId).
  body: { fp: "anonymous", retrievalPageSize: 5, currentPath },
  fetch: fetchAndKeep,
});

try {
  const chunks = await transport.sendMessages({
    chatId: "aiclient-test",
    messages: [{ id: "q1", role: "user", parts: [{ type: "text", text: question }] }],
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: AbortSignal.timeout(60_000),
  });
  // Keeps each chunk as the schema passed it, on its way to the reader.
  const kept = chunks.pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        seen.chunks.push(chunk.type);
        if (chunk.type === "finish") seen.finish = chunk;
        controller.enqueue(chunk);
      },
    }),
  );
  let message = null;
  for await (const snapshot of readUIMessageStream({ stream: kept, terminateOnError: true })) {
    message = snapshot;
  }
  if (message === null) throw new Error("the stream held no message");
  seen.text = message.parts.filter(isTextUIPart).map((p) => p.text).join("");
  seen.tools = message.parts.filter(isToolUIPart).map((p) => ({
    name: getToolName(p),
    state: p.state,
    input: p.input ?? null,
    output: p.output ?? null,
  }));
  seen.metadata = message.metadata ?? null;
  if (seen.finish === null) throw new Error("the stream ended without a finish chunk");
} catch (err) {
  // The name and message, not the stack: a schema's refusal lists every
  // chunk type the chunk did not match, which is long enough.
  seen.error = String(err).slice(0, 8000);
}

process.stdout.write(JSON.stringify(seen) + "\n");
process.exitCode = seen.error === null ? 0 : 1;
