#!/usr/bin/env node
// ecarte-js — a simple Écarté bot for Node.js 18+, written from PROTOCOL.md alone.
//
// Line-delimited JSON over stdin/stdout (protocol version 1), no npm dependencies.
// Unknown fields and unknown message types are ignored (§2.5).
//
// Strategy (stateless: every decision is taken from the request's view):
//   propose  stand with 2+ trumps, else propose;
//   answer   accept unless holding 2+ trumps;
//   discard  discard the non-trump non-kings (the closest option in `legal`);
//   mark     always mark the king of trumps;
//   trick    follow with the lowest card that wins the trick, else the lowest card;
//            lead the highest card (trumps first).
// The answer is always one of the strings of view.legal, echoed verbatim.
//
// Run: node engines/js/bot.js
"use strict";

const fs = require("node:fs");
const readline = require("node:readline");

const RANKS = "789TAJQK"; // lowest first: K Q J A T 9 8 7 from the top (§4.1)

function send(obj) {
  // One line per message.  Node writes to a pipe synchronously on Linux and never
  // holds a line back waiting for more output, so each reply leaves at once (§2.4).
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function log(text) {
  try {
    fs.writeSync(2, `ecarte-js: ${text}\n`);
  } catch {
    // stderr is best effort
  }
}

const isCard = (c) =>
  typeof c === "string" && c.length === 2 && RANKS.includes(c[0]) && "SHDC".includes(c[1]);
const rank = (c) => RANKS.indexOf(c[0]);
const key = (c, trump) => (c[1] === trump ? 8 : 0) + rank(c);
const beats = (card, lead, trump) =>
  card[1] === lead[1] ? rank(card) > rank(lead) : card[1] === trump;
const keepValue = (c, trump) => (c[1] === trump ? 100 + rank(c) : c[0] === "K" ? 50 : rank(c));

function discardScore(action, trump) {
  const parts = action.split(" ");
  if (parts[0] !== "discard") return null;
  let score = 0;
  for (const card of parts.slice(1)) {
    if (!isCard(card)) return null;
    const v = keepValue(card, trump);
    score += v >= 50 ? -(1000 + v) : 10 - v;
  }
  return score;
}

function chooseCard(view, legal, trump) {
  const trick = Array.isArray(view.trick) ? view.trick : [];
  const lead = isCard(trick[0]) ? trick[0] : null;
  const cards = legal.filter(isCard);
  if (cards.length === 0) return null;
  const byKey = [...cards].sort((a, b) => key(a, trump) - key(b, trump));
  if (lead === null) return byKey[byKey.length - 1];
  const win = byKey.find((c) => beats(c, lead, trump));
  return win ?? byKey[0];
}

function decide(view) {
  if (view === null || typeof view !== "object") return null;
  const legal = Array.isArray(view.legal) ? view.legal.filter((a) => typeof a === "string") : [];
  if (legal.length === 0) return null;
  let trump = "?";
  if (typeof view.trump === "string" && view.trump.length === 1) trump = view.trump;
  else if (isCard(view.turnup)) trump = view.turnup[1];
  const hand = Array.isArray(view.hand) ? view.hand : [];
  const trumps = hand.filter((c) => isCard(c) && c[1] === trump).length;
  const pick = (a) => (legal.includes(a) ? a : null);

  let choice = null;
  switch (view.phase) {
    case "propose":
      choice = pick(trumps >= 2 ? "stand" : "propose");
      break;
    case "answer":
      choice = pick(trumps >= 2 ? "refuse" : "accept");
      break;
    case "discard": {
      let best = -Infinity;
      for (const a of legal) {
        const s = discardScore(a, trump);
        if (s !== null && s > best) {
          best = s;
          choice = a;
        }
      }
      break;
    }
    case "mark":
      choice = pick("mark");
      break;
    case "trick":
      choice = chooseCard(view, legal, trump);
      break;
    default:
      break;
  }
  // Unknown phase or nothing matched: any legal action is legal.
  return choice ?? legal[0];
}

function handle(msg) {
  switch (msg.type) {
    case "hello":
      send({ type: "hello", name: "js-simple", author: "ecarte-arena", version: "1.0", protocol: 1 });
      break;
    case "request": {
      const action = decide(msg.view);
      if (!Number.isInteger(msg.id) || action === null) {
        log("cannot answer a request (no id or no legal action)");
        break;
      }
      send({ type: "action", id: msg.id, action });
      break;
    }
    case "forfeit":
      log(`forfeit: ${msg.reason}: ${msg.detail}`);
      process.exit(0);
      break;
    case "quit":
      process.exit(0);
      break;
    default:
      // new_game, deal, event, hand, deal_end, game_end and unknown types: nothing to do.
      break;
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
rl.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    log("ignoring a line that is not JSON");
    return;
  }
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
    log("ignoring a line that is not a JSON object");
    return;
  }
  handle(msg);
});
rl.on("close", () => process.exit(0));
