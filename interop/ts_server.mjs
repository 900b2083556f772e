// A small server written with the official TypeScript server (@modelcontextprotocol/server 2.4.0)
// that asks its client for elicitation, sampling and roots: the peer rondo's client is checked
// against (interop/rondo_client_check.py).
//
//   node interop/ts_server.mjs --stdio     serve over stdio
//   node interop/ts_server.mjs --http      serve over HTTP on a free loopback port; prints
//                                          "http://127.0.0.1:PORT/mcp" and exits on stdin EOF
//
// Tools (each returns input_required until its answers arrive):
//   confirm_action {action}  form elicitation, with a requestState the retry must echo
//   summarize {text}         sampling/createMessage
//   show_roots               roots/list
//   plan_trip {city}         two rounds: a form (dates), then sampling and roots together
//   open_link                URL elicitation
import { createServer } from 'node:http';
import { McpServer, createMcpHandler, inputRequired, acceptedContent } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { toNodeHandler } from '@modelcontextprotocol/node';
import * as z from 'zod';

const CONFIRM_SCHEMA = {
  type: 'object',
  properties: { confirmed: { type: 'boolean', description: 'Go ahead?' } },
  required: ['confirmed'],
};
const DATES_SCHEMA = {
  type: 'object',
  properties: { nights: { type: 'integer', minimum: 1, maximum: 30 } },
  required: ['nights'],
};

function text(value) {
  return { content: [{ type: 'text', text: value }] };
}

function samplingText(answer) {
  const blocks = Array.isArray(answer?.content) ? answer.content : [answer?.content];
  return blocks.filter((b) => b?.type === 'text').map((b) => b.text).join('');
}

function rootsText(answer) {
  return (answer?.roots ?? []).map((r) => r.uri).join(',');
}

function build() {
  const server = new McpServer({ name: 'ts-interop-server', version: '1.0.0' }, { capabilities: { tools: {} } });

  server.registerTool('confirm_action', { inputSchema: z.object({ action: z.string() }) }, async ({ action }, ctx) => {
    const responses = ctx.mcpReq.inputResponses;
    const answer = responses?.confirm;
    if (answer === undefined) {
      return inputRequired({
        inputRequests: { confirm: inputRequired.elicit({ message: `Really ${action}?`, requestedSchema: CONFIRM_SCHEMA }) },
        requestState: `{"step":1,"action":${JSON.stringify(action)},"note":"opaque \\u00e9 state"}`,
      });
    }
    const state = ctx.mcpReq.requestState();
    if (state !== `{"step":1,"action":${JSON.stringify(action)},"note":"opaque \\u00e9 state"}`) {
      throw new Error(`requestState was not echoed byte for byte: ${JSON.stringify(state)}`);
    }
    const content = acceptedContent(responses, 'confirm');
    return text(content?.confirmed === true ? `confirmed ${action}` : `declined ${action}`);
  });

  server.registerTool('summarize', { inputSchema: z.object({ text: z.string() }) }, async ({ text: body }, ctx) => {
    const answer = ctx.mcpReq.inputResponses?.summary;
    if (answer === undefined) {
      return inputRequired({
        inputRequests: {
          summary: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${body}` } }],
            maxTokens: 50,
          }),
        },
      });
    }
    return text(`summary (${answer.model}): ${samplingText(answer)}`);
  });

  server.registerTool('show_roots', {}, async (ctx) => {
    const answer = ctx.mcpReq.inputResponses?.roots;
    if (answer === undefined) {
      return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
    }
    return text(`roots: ${rootsText(answer)}`);
  });

  server.registerTool('plan_trip', { inputSchema: z.object({ city: z.string() }) }, async ({ city }, ctx) => {
    const responses = ctx.mcpReq.inputResponses ?? {};
    const state = ctx.mcpReq.requestState();
    if (state === undefined) {
      if (responses.dates === undefined) {
        return inputRequired({
          inputRequests: { dates: inputRequired.elicit({ message: `How many nights in ${city}?`, requestedSchema: DATES_SCHEMA }) },
        });
      }
      const nights = acceptedContent(responses, 'dates')?.nights;
      return inputRequired({
        inputRequests: {
          idea: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: `One idea for ${city}` } }],
            maxTokens: 20,
          }),
          where: inputRequired.listRoots(),
        },
        requestState: `nights=${nights}`,
      });
    }
    if (responses.idea === undefined || responses.where === undefined) {
      throw new Error('round 2 answers missing');
    }
    return text(`${city}: ${state}; idea: ${samplingText(responses.idea)}; roots: ${rootsText(responses.where)}`);
  });

  server.registerTool('open_link', {}, async (ctx) => {
    const answer = ctx.mcpReq.inputResponses?.link;
    if (answer === undefined) {
      return inputRequired({
        inputRequests: { link: inputRequired.elicitUrl({ message: 'Sign in, please', url: 'https://example.com/sign-in' }) },
      });
    }
    return text(`link ${answer.action}`);
  });

  return server;
}

const mode = process.argv[2];
if (mode === '--stdio') {
  serveStdio(build);
} else if (mode === '--http') {
  const http = createServer(toNodeHandler(createMcpHandler(build)));
  http.listen(0, '127.0.0.1', () => {
    process.stdout.write(`http://127.0.0.1:${http.address().port}/mcp\n`);
  });
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
} else {
  process.stderr.write('usage: node interop/ts_server.mjs --stdio | --http\n');
  process.exit(2);
}
