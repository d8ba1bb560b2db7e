// Asks the assistant questions the way a page using the ai package's
// useChat does, and prints as JSON what the package made of the answers.
//
//   ASSISTANT_KEY=... node ask.mjs URL CURRENT_PATH QUESTION [FOLLOW_UP...]
//
// Each request goes through the package's DefaultChatTransport (the
// transport useChat uses): its body, its fetch, and its parsing of the
// response, which validates every chunk against the package's schema of
// the UI message stream and fails on the first it refuses. The chunks then
// go through readUIMessageStream, which builds the message as useChat
// shows it, and fails on a chunk out of order (a delta of a text never
// started, an output of a tool never called). A follow-up sends the whole
// conversation so far, as useChat does, with the thread's ID (from the
// first answer's metadata) and its key (from the first response's
// X-Thread-Key header).
//
// It prints one JSON object on a line, {"answers": [...], "error": ...}:
// for each answer, the response's status and headers, the chunks' types
// in order, the finish chunk, the message's text, its tool parts and its
// metadata; and the first error, null when there was none, after which it
// asks no more. It exits 1 when there was an error, 0 otherwise.
import { DefaultChatTransport, getToolName, isTextUIPart, isToolUIPart, readUIMessageStream } from "ai";

const [url, currentPath, ...questions] = process.argv.slice(2);
if (!url || !currentPath || questions.length === 0 || !process.env.ASSISTANT_KEY) {
  console.error("usage: ASSISTANT_KEY=... node ask.mjs URL CURRENT_PATH QUESTION [FOLLOW_UP...]");
  process.exit(2);
}

const result = { answers: [], error: null };
const messages = [];
let thread = {}; // threadId and threadKey, once the first answer gave them

for (const [i, question] of questions.entries()) {
  const seen = { status: null, headers: {}, chunks: [], finish: null, text: "", tools: [], metadata: null };
  result.answers.push(seen);
  // The transport gives the stream, not the response: its fetch is
  // wrapped to keep what the response said besides.
  let threadKey = null;
  const fetchAndKeep = async (input, init) => {
    const response = await fetch(input, init);
    seen.status = response.status;
    for (const name of ["content-type", "cache-control", "x-vercel-ai-ui-message-stream", "x-accel-buffering", "x-thread-id"]) {
      seen.headers[name] = response.headers.get(name);
    }
    // The thread's key is a secret: whether it came is what is printed.
    threadKey = response.headers.get("x-thread-key");
    seen.headers["x-thread-key-present"] = threadKey !== null;
    return response;
  };
  const transport = new DefaultChatTransport({
    api: url,
    headers: { Authorization: `Bearer ${process.env.ASSISTANT_KEY}` },
    // The hosted assistant's fields, which useChat sends beside its own
    // (id, messages, trigger, messageId).
    body: { fp: "anonymous", retrievalPageSize: 5, currentPath, ...thread },
    fetch: fetchAndKeep,
  });
  messages.push({ id: `q${i}`, role: "user", parts: [{ type: "text", text: question }] });
  try {
    const chunks = await transport.sendMessages({
      chatId: "aiclient-test",
      messages,
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
    messages.push(message);
    if (i === 0) thread = { threadId: message.metadata?.threadId, threadKey };
  } catch (err) {
    // The name and message, not the stack: a schema's refusal lists every
    // chunk type the chunk did not match, which is long enough.
    result.error = String(err).slice(0, 8000);
    break;
  }
}

process.stdout.write(JSON.stringify(result) + "\n");
process.exitCode = result.error === null ? 0 : 1;
