#!/usr/bin/env node
// A status and notification extension for xcsh, in Node with no
// dependencies: it keeps a status line saying what the agent is doing and
// tells the user when a run is over, with the tools it used.
//
// An xcsh extension speaks JSON-RPC 2.0, one message per line, on stdin
// and stdout (docs/extensions.md). Events arrive as notifications; the UI
// calls used here are fire-and-forget, so they are sent as notifications
// too and nothing waits for an answer.
'use strict';
const readline = require('node:readline');

function send(message) {
  message.jsonrpc = '2.0';
  process.stdout.write(JSON.stringify(message) + '\n');
}

function notify(method, params) {
  send({ method, params });
}

let tools = [];

const handlers = {
  initialize(params) {
    return {
      name: 'status',
      subscribe: ['agent_start', 'tool_execution_start', 'agent_end'],
    };
  },
  agent_start(params) {
    tools = [];
    notify('ui.setStatus', { key: 'agent', text: 'working', sessionId: params.sessionId });
  },
  tool_execution_start(params) {
    tools.push(params.toolName);
    notify('ui.setStatus', { key: 'agent', text: 'running ' + params.toolName });
  },
  agent_end(params) {
    notify('ui.setStatus', { key: 'agent' }); // no text: clear it
    const used = tools.length ? tools.join(', ') : 'no tools';
    notify('ui.notify', { message: `Run finished (${used}).`, type: 'info' });
  },
};

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  const handler = handlers[message.method];
  let result = null;
  if (handler) {
    try {
      result = handler(message.params || {}) ?? null;
    } catch (err) {
      if (message.id !== undefined) send({ id: message.id, error: { code: -32000, message: String(err) } });
      return;
    }
  }
  // Requests (with an id) get an answer; notifications do not.
  if (message.id !== undefined && message.method) {
    if (handler) send({ id: message.id, result });
    else send({ id: message.id, error: { code: -32601, message: 'unknown method ' + message.method } });
  }
});
rl.on('close', () => process.exit(0));
