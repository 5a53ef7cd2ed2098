// qchess web board: plain JavaScript over the JSON API (docs/web.md). The board picture is the
// server's SVG (the shared renderer): every square is an element with data-square="e4".
"use strict";

const $ = (id) => document.getElementById(id);
const SQ = "([a-h][1-8])";
const RE_SPLIT = new RegExp("^" + SQ + "\\^" + SQ + SQ);
const RE_MERGE = new RegExp("^" + SQ + SQ + "\\^" + SQ);
const RE_PLAIN = new RegExp("^" + SQ + SQ + "(=?[QRBNPqrbnp])?$");

const app = {
  id: null,
  tokens: {},      // side ("white"/"black") -> token, the ones this browser holds
  urlToken: null,
  state: null,
  legal: [],
  touchable: [],
  picked: [],      // squares clicked so far for the move being built
};

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  let data = null;
  try { data = await res.json(); } catch (_) { data = null; }
  if (!res.ok) {
    const e = data && data.error ? data.error : { kind: "http", message: res.status + " " + res.statusText };
    throw e;
  }
  return data;
}

function sideName(c) { return c === "w" ? "white" : "black"; }

// The token to act with: the side to move's when this browser holds it (hot-seat).
function activeToken() {
  const s = app.state;
  if (s && app.tokens[sideName(s.side_to_move)]) return app.tokens[sideName(s.side_to_move)];
  return app.urlToken;
}

function showLobby() {
  $("lobby").hidden = false;
  $("new-game").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const variant = $("variant").value;
    const body = { variant, opponent: $("opponent").value, color: $("color").value };
    const rules = $("rules").value.trim();
    if (rules) body.rules = rules.split(",").map((r) => r.trim()).filter((r) => r);
    if (variant === "niels") body.board = $("board-size").value;
    await startGame(body);
  });
  $("import").addEventListener("click", async () => {
    await startGame({ variant: $("variant").value, record: $("import-text").value });
  });
}

async function startGame(body) {
  try {
    const g = await api("POST", "/api/games", body);
    sessionStorage.setItem("qchess:" + g.id, JSON.stringify(g.tokens));
    const mine = body.opponent && body.opponent !== "human" && body.color === "black" ? g.tokens.black : g.tokens.white;
    location.href = "/play/" + g.id + "?token=" + mine;
  } catch (e) {
    $("lobby-error").textContent = e.kind + ": " + e.message;
  }
}

async function openGame(id) {
  app.id = id;
  app.urlToken = new URLSearchParams(location.search).get("token");
  const saved = sessionStorage.getItem("qchess:" + id);
  if (saved) {
    try { app.tokens = JSON.parse(saved); } catch (_) { app.tokens = {}; }
  }
  $("game").hidden = false;
  wireControls();
  await refresh();
}

async function refresh() {
  try {
    let s = await api("GET", "/api/games/" + app.id + "?token=" + encodeURIComponent(app.urlToken || ""));
    // Hot-seat: show the side to move's view (it matters in Akl under own-pairs).
    const t = app.tokens[sideName(s.side_to_move)];
    if (t && t !== app.urlToken) s = await api("GET", "/api/games/" + app.id + "?token=" + t);
    await show(s);
  } catch (e) {
    say(e.kind + ": " + e.message, true);
  }
}

async function show(s) {
  app.state = s;
  app.picked = [];
  document.body.dataset.variant = s.variant;
  try {
    const l = await api("GET", "/api/games/" + app.id + "/legal?token=" + activeToken());
    app.legal = l.legal_moves || [];
    app.touchable = l.touchable || [];
  } catch (_) {
    app.legal = [];
    app.touchable = [];
  }
  drawBoard();
  drawPanel();
  announce(s.last || []);
  document.body.dataset.plies = String((s.history || []).length);
  document.body.dataset.ready = "1";
  document.body.dataset.renders = String(Number(document.body.dataset.renders || 0) + 1);
}

function say(text, error) {
  $("message").textContent = text;
  $("message").className = error ? "error" : "";
}

function announce(reports) {
  const parts = [];
  for (const r of reports) {
    if (r.ok === false && r.error) { parts.push("refused: " + r.error.message); continue; }
    const o = r.outcome;
    let text = (r.notation || r.move) + "";
    if (app.state.variant === "cantwell" && o !== null && o !== undefined) {
      text += ": measured, " + (o === 1 ? "the move happened" : "the move did not happen") +
        " (probability " + r.probability + ")";
    } else if (app.state.variant === "niels" && o) {
      if (o.rolls.length) text += ": rolled " + o.rolls.map((x) => x.value + " (" + x.player + ")").join(", ");
      if (o.collapses.length) text += "; collapsed " + o.collapses.map((c) => c.piece + " to " + c.square + " (" + c.mark + ")").join(", ");
      if (o.captured) text += "; captured " + o.captured;
    } else if (app.state.variant === "akl" && o) {
      const collapsed = o.collapse ? ": " + o.from + " collapsed to " + o.collapse : "";
      if (o.turn === "awaiting_move") text = "touched " + o.from + collapsed + " (" + o.type + "): choose its move";
      else text += collapsed;
      if (o.turn === "check_by_collapse") text += ": check by collapse, the turn is over";
      if (o.turn === "no_legal_move") text += ": no legal move, the turn is over";
      if (o.captured) text += "; captured " + o.captured;
    }
    parts.push(text);
  }
  if (parts.length) say(parts.join(" | "), false);
}

// ----- the board ---------------------------------------------------------------------------

function squareEl(sq) {
  return $("board").querySelector('[data-square="' + sq + '"]');
}

function overlay(sq, cls) {
  const el = squareEl(sq);
  const svg = $("board").querySelector("svg");
  if (!el || !svg) return;
  const shape = el.querySelector("rect") || el;
  const b = shape.getBBox();
  const r = document.createElementNS("http://www.w3.org/2000/svg", "rect");
  r.setAttribute("x", b.x); r.setAttribute("y", b.y);
  r.setAttribute("width", b.width); r.setAttribute("height", b.height);
  r.setAttribute("class", cls);
  r.setAttribute(cls === "hl" ? "data-target" : "data-selected", sq);
  svg.appendChild(r);
}

function drawBoard() {
  const s = app.state;
  $("board").innerHTML = s.svg || "<p>(no board picture)</p>";
  for (const el of $("board").querySelectorAll("[data-square]")) {
    el.addEventListener("click", () => clicked(el.getAttribute("data-square")));
  }
  highlight();
}

function mode() {
  const checked = document.querySelector('input[name="mode"]:checked');
  return checked ? checked.value : "move";
}

// Parsed legal moves: {text, kind: plain|split|merge|other, from: [..], to: [..]}.
function parsedMoves() {
  return app.legal.map((text) => {
    let m = RE_SPLIT.exec(text);
    if (m) return { text, kind: "split", from: [m[1]], to: [m[2], m[3]] };
    m = RE_MERGE.exec(text);
    if (m) return { text, kind: "merge", from: [m[1], m[2]], to: [m[3]] };
    m = RE_PLAIN.exec(text);
    if (m) return { text, kind: "plain", from: [m[1]], to: [m[2]], promo: !!m[3] };
    return { text, kind: "other", from: [], to: [] };
  });
}

// The squares that may be clicked next for the move being built, in the current mode.
function candidates() {
  const p = app.picked;
  const s = app.state;
  if (s.variant === "akl") {
    if (s.pending) return app.legal.map((m) => m.slice(2, 4));
    return app.touchable;
  }
  const moves = parsedMoves();
  const m = mode();
  const out = new Set();
  for (const mv of moves) {
    if (m === "move" && mv.kind === "plain") {
      if (p.length === 0) out.add(mv.from[0]);
      else if (mv.from[0] === p[0]) out.add(mv.to[0]);
    } else if (m === "split" && mv.kind === "split") {
      if (p.length === 0) out.add(mv.from[0]);
      else if (mv.from[0] === p[0] && p.length === 1) { out.add(mv.to[0]); out.add(mv.to[1]); }
      else if (mv.from[0] === p[0] && p.length === 2) {
        if (mv.to[0] === p[1]) out.add(mv.to[1]);
        if (mv.to[1] === p[1]) out.add(mv.to[0]);
      }
    } else if (m === "merge" && mv.kind === "merge") {
      if (p.length === 0) { out.add(mv.from[0]); out.add(mv.from[1]); }
      else if (p.length === 1 && mv.from.includes(p[0])) out.add(mv.from[0] === p[0] ? mv.from[1] : mv.from[0]);
      else if (p.length === 2 && mv.from.includes(p[0]) && mv.from.includes(p[1])) out.add(mv.to[0]);
    }
  }
  return [...out];
}

function highlight() {
  for (const r of $("board").querySelectorAll(".hl, .sel")) r.remove();
  if (!app.state || app.state.status !== "ongoing") return;
  for (const sq of app.picked) overlay(sq, "sel");
  if (app.state.variant === "akl" && app.state.pending) overlay(app.state.pending.square, "sel");
  const akl = app.state.variant === "akl";
  if ((!akl && app.picked.length > 0) || (akl && app.state.pending)) for (const sq of candidates()) overlay(sq, "hl");
  // Every legal move of the selected piece, for the moves without a click form.
  const box = $("square-moves");
  box.innerHTML = "";
  if (app.picked.length === 1) {
    const sq = app.picked[0];
    for (const text of app.legal.filter((t) => t.includes(sq))) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = text;
      b.addEventListener("click", () => send(text));
      box.appendChild(b);
    }
  }
}

async function clicked(sq) {
  const s = app.state;
  if (!s || s.status !== "ongoing") return;
  if (s.variant === "akl") {
    if (s.pending) {
      const moves = app.legal.filter((m) => m.slice(2, 4) === sq);
      if (!moves.length) return;
      const promo = moves.find((m) => m.length === 5 && m[4] === $("promotion").value);
      return send(promo || moves[0]);
    }
    if (app.touchable.includes(sq)) return send(sq);
    return;
  }
  const p = app.picked;
  if (p.length && p[p.length - 1] === sq) { app.picked = []; return highlight(); }
  if (!candidates().includes(sq)) {
    app.picked = [];
    if (candidates().includes(sq)) app.picked = [sq];
    return highlight();
  }
  p.push(sq);
  const m = mode();
  if (m === "move" && p.length === 2) {
    const moves = parsedMoves().filter((mv) => mv.kind === "plain" && mv.from[0] === p[0] && mv.to[0] === p[1]);
    const promo = moves.find((mv) => mv.promo && mv.text.toLowerCase().endsWith($("promotion").value));
    return send(promo ? promo.text : moves[0].text);
  }
  if (m === "split" && p.length === 3) {
    return send(p[0] + "^" + p[1] + p[2] + (s.variant === "niels" ? ":" + $("facings").value : ""));
  }
  if (m === "merge" && p.length === 3) return send(p[0] + p[1] + "^" + p[2]);
  highlight();
}

async function send(text) {
  const body = { move: text };
  if (app.state.variant === "niels" && $("dice").value) body.rolls = [Number($("dice").value)];
  try {
    const r = await api("POST", "/api/games/" + app.id + "/moves?token=" + activeToken(), body);
    await showAfter(r.state);
  } catch (e) {
    app.picked = [];
    highlight();
    say(e.kind + ": " + e.message, true);
  }
}

// After an action, show the next side's view in hot-seat, else this side's.
async function showAfter(state) {
  const t = app.tokens[sideName(state.side_to_move)];
  if (t && state.you !== sideName(state.side_to_move)) {
    const reports = state.last;
    const s = await api("GET", "/api/games/" + app.id + "?token=" + t);
    s.last = reports;
    return show(s);
  }
  return show(state);
}

// ----- the panel ---------------------------------------------------------------------------

function fmt(x) { return typeof x === "number" ? String(x) : JSON.stringify(x); }

function drawPanel() {
  const s = app.state;
  document.querySelectorAll(".niels-only").forEach((e) => { e.hidden = s.variant !== "niels"; });
  document.querySelectorAll(".cantwell-only").forEach((e) => { e.hidden = s.variant !== "cantwell"; });
  $("mode-merge").parentElement.hidden = s.variant !== "cantwell";
  $("modes").hidden = s.variant === "akl";
  let status = s.variant + " (" + (s.board || "8x8") + ") - " + s.status;
  if (s.status === "ongoing") status += ", " + sideName(s.side_to_move) + " to move";
  if (s.in_check) status += ", check";
  if (s.reason) status += " (" + s.reason + ")";
  $("status").textContent = status;
  const h = $("history");
  h.innerHTML = "";
  for (const m of s.history || []) {
    const li = document.createElement("li");
    li.textContent = m;
    h.appendChild(li);
  }
  const lines = [];
  if (s.variant === "cantwell") {
    lines.push("state size: " + s.state_size + " basis states");
    lines.push("occupancy probabilities (exact):");
    for (const [sq, p] of Object.entries(s.probabilities)) if (p !== 1) lines.push("  " + sq + ": " + fmt(p));
    lines.push("boards (up to 64): ");
    for (const [b, p] of Object.entries(s.distribution)) lines.push("  " + fmt(p) + "  " + b);
  } else if (s.variant === "niels") {
    lines.push("in check: " + s.in_check);
    for (const p of s.pairs) {
      lines.push("pair " + p.id + ": red " + p.red + ", blue " + p.blue + ", marks " + p.facings +
        (p.diagonal ? ", entangled (" + p.diagonal + ")" : "") + ", " +
        Object.entries(p.probabilities).map(([k, v]) => k + " " + fmt(v)).join(", "));
    }
    for (const g of s.groups) {
      lines.push("group " + g.diagonal + " " + g.pairs.join(" ") + ": " +
        g.outcomes.map((o) => JSON.stringify(o.squares) + " " + fmt(o.probability)).join("; "));
    }
  } else if (s.variant === "akl") {
    lines.push("you see the board as " + sideName(s.viewer));
    if (s.pending) lines.push("touched: " + s.pending.square + " (" + s.pending.type + "), moves " + s.pending.legal_moves.join(" "));
    lines.push("captured: " + (s.captured.join(" ") || "none"));
    lines.push("quiet plies: " + s.quiet_plies);
    const sup = Object.entries(s.pieces).filter(([, p]) => p.quantum)
      .map(([sq, p]) => sq + " " + (p.pair ? p.pair.join("|") : p.known.join("|") + "|?"));
    lines.push("in superposition: " + sup.join(", "));
  }
  lines.push("last move:");
  for (const r of s.last || []) lines.push("  " + JSON.stringify(r.outcome !== undefined ? { move: r.notation || r.move, outcome: r.outcome, probability: r.probability } : r));
  $("numbers").textContent = lines.join("\n");
  const other = app.tokens.black && s.opponent === "human";
  $("share").textContent = other ? "Black's own link (for play over the network): " + location.origin + "/play/" + app.id + "?token=" + app.tokens.black : "";
}

function wireControls() {
  for (const r of document.querySelectorAll('input[name="mode"]')) {
    r.addEventListener("change", () => { app.picked = []; highlight(); });
  }
  $("move-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const t = $("move-text").value.trim();
    if (t) send(t);
  });
  $("undo").addEventListener("click", async () => {
    try {
      const r = await api("POST", "/api/games/" + app.id + "/undo?token=" + activeToken(), {});
      await showAfter(r.state);
      say("took back", false);
    } catch (e) { say(e.kind + ": " + e.message, true); }
  });
  $("export").addEventListener("click", async () => {
    try {
      const r = await api("GET", "/api/games/" + app.id + "/record");
      const ta = $("record-text");
      ta.hidden = false;
      ta.value = r.record;
      const a = $("download");
      a.hidden = false;
      a.download = "qchess-" + r.variant + "-" + app.id + (r.variant === "cantwell" ? ".json" : ".txt");
      a.href = URL.createObjectURL(new Blob([r.record], { type: "text/plain" }));
      if (!r.complete) say("the record holds the moves only: the start position is secret until the game ends", false);
    } catch (e) { say(e.kind + ": " + e.message, true); }
  });
  $("bell-go").addEventListener("click", async () => {
    try {
      const r = await api("GET", "/api/games/" + app.id + "/bell?token=" + activeToken() +
        "&a=" + $("bell-a").value.trim() + "&b=" + $("bell-b").value.trim());
      $("bell-out").textContent = "psi (|01> + i^k|10>)/sqrt2, k=0..3: " + r.psi.join(", ") +
        "\nphi (|00> + i^k|11>)/sqrt2, k=0..3: " + r.phi.join(", ") +
        "\nlargest: " + r.max.name + " = " + r.max.value + "\nlog negativity: " + r.log_negativity;
    } catch (e) { $("bell-out").textContent = e.kind + ": " + e.message; }
  });
}

const m = /^\/play\/([0-9a-f]+)$/.exec(location.pathname);
if (m) openGame(m[1]); else showLobby();
