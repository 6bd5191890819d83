// The ragline page: a chat with streamed answers, open citations, see sources, traces and eval reports.
// The key lives in sessionStorage (this tab only) and goes in the Authorization header of each call.
// The conversation lives in this page only (`history`): each question is sent with the turns before it, and
// the server condenses a follow-up into a standalone question. Earlier turns stay above, each with its sources.
"use strict";
const $ = (id) => document.getElementById(id);
let key = sessionStorage.getItem("ragline-key") || "";
let lastAnswer = null;
let lastQuestion = "";
let history = [];  // [{role: "user" | "assistant", content}], oldest first
let answersShown = 0;  // counted in #answer[data-shown], so a script can wait for the next answer

async function api(path, options = {}) {
  const headers = { Authorization: "Bearer " + key, ...(options.headers || {}) };
  const response = await fetch(path, { ...options, headers });
  if (response.status === 401) { forget("That key is not valid (or was revoked)."); throw new Error("unauthorized"); }
  return response;
}

async function errorText(response) {
  try { const body = await response.json(); return body.error ? body.error.message : response.statusText; }
  catch (e) { return response.statusText; }
}

function forget(message) {
  key = ""; sessionStorage.removeItem("ragline-key");
  $("app").hidden = true; $("login").hidden = false; $("login-error").textContent = message || "";
}

async function login(candidate) {
  key = candidate;
  const response = await fetch("/v1/status", { headers: { Authorization: "Bearer " + key } });
  if (!response.ok) { forget(response.status === 401 ? "That key is not valid (or was revoked)." : await errorText(response)); return; }
  const status = await response.json();
  sessionStorage.setItem("ragline-key", key);
  $("who").textContent = `${status.principal.name} · groups ${status.principal.groups.join(", ")} · ` +
    `${status.documents} chunks, generation ${status.generation}`;
  $("login").hidden = true; $("app").hidden = false; $("login-error").textContent = "";
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) { if (k === "class") node.className = v; else node.setAttribute(k, v); }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

// Server-sent events from a fetch body (EventSource cannot send the Authorization header).
async function* events(response) {
  const reader = response.body.getReader(); const decoder = new TextDecoder(); let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
      let event = "message"; const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7); else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      yield { event, data: JSON.parse(data.join("\n") || "{}") };
    }
  }
}

async function ask(question) {
  if (lastAnswer) archiveTurn(lastQuestion, lastAnswer);  // the previous turn joins the conversation above
  lastAnswer = null; lastQuestion = question; $("standalone").textContent = "";
  $("answer").textContent = ""; $("answer").className = ""; $("citations").textContent = "";
  $("sources").tBodies[0].textContent = ""; $("trace-box").hidden = true; $("status").textContent = "retrieving…";
  const turns = history.slice();
  history.push({ role: "user", content: question });
  const response = await api("/v1/ask", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ question, history: turns, stream: true }) });
  if (!response.ok) { $("status").textContent = await errorText(response); return; }
  let text = "";
  for await (const { event, data } of events(response)) {
    if (event === "piece") { text += data.text; $("status").textContent = "answering…"; renderAnswer(text, null); }
    else if (event === "answer") {
      lastAnswer = data; renderResult(data);
      history.push({ role: "assistant", content: data.abstained ? "I don't know." : data.answer });
    }
    else if (event === "error") { $("status").textContent = "error: " + data.message; }
    else if (event === "done" && $("status").textContent.endsWith("…")) { $("status").textContent = ""; }
  }
}

// The answer with each [n] as a button that opens source n.
function renderAnswer(text, result, box = $("answer")) {
  box.textContent = "";
  const parts = text.split(/(\[\d+\])/);
  for (const part of parts) {
    const m = part.match(/^\[(\d+)\]$/);
    if (m && result) box.append(citeButton(Number(m[1]), result)); else box.append(part);
  }
}

function citeButton(n, result) {
  const button = el("button", { class: "cite", "data-cite": String(n), type: "button" }, `[${n}]`);
  button.addEventListener("click", () => openCitation(n, result));
  return button;
}

// "p. 3", "slide 2", "sheet Rates": where in its file a source or chunk is (the JSON's page, slide, sheet).
function anchorLabel(item) {
  const parts = [];
  if (item.page != null) parts.push(`p. ${item.page}`);
  if (item.slide != null) parts.push(`slide ${item.slide}`);
  if (item.sheet != null) parts.push(`sheet ${item.sheet}`);
  return parts.join(", ");
}

// A link to the cited place: opens the document at the cited chunk, labelled with its page, slide or sheet.
function anchorLink(n, item, result) {
  const label = anchorLabel(item);
  if (!label) return "";
  const link = el("a", { class: "anchor", href: "#", "data-anchor": label }, label);
  link.addEventListener("click", (event) => { event.preventDefault(); openCitation(n, result); });
  return link;
}

// A finished turn in the conversation above: the question as asked (and as condensed), the answer, its
// citations (each opens its chunk) and its sources.
function archiveTurn(question, result) {
  const n = $("chat").children.length + 1;
  const answer = el("div", { class: "turn-answer" + (result.abstained ? " abstained" : "") });
  if (result.abstained) answer.textContent = "The sources do not answer this question.";
  else renderAnswer(result.answer, result, answer);
  const turn = el("article", { class: "turn", "data-turn": String(n) }, el("p", { class: "turn-question" }, question));
  if (result.conversation && result.conversation.question !== question)
    turn.append(el("p", { class: "hint standalone" }, "asked as: " + result.conversation.question));
  turn.append(answer);
  const cites = el("div", { class: "turn-citations" });
  for (const c of result.citations)
    cites.append(el("p", {}, citeButton(c.n, result), " ", c.title || c.doc_id, " ", el("span", { class: "hint" }, `(${c.doc_id})`)));
  const sources = el("details", {}, el("summary", {}, `${result.sources.length} sources`));
  for (const s of result.sources) sources.append(el("p", { class: "hint" }, `[${s.n}] ${s.title || s.doc_id} (${s.doc_id})`));
  turn.append(cites, sources);
  $("chat").append(turn);
}

function newConversation() {
  history = []; lastAnswer = null; lastQuestion = ""; $("chat").textContent = ""; $("standalone").textContent = "";
  $("answer").textContent = ""; $("citations").textContent = ""; $("sources").tBodies[0].textContent = "";
  $("status").textContent = "new conversation";
}

function renderResult(result) {
  if (result.conversation && result.conversation.question !== lastQuestion)
    $("standalone").textContent = "asked as: " + result.conversation.question;
  if (result.abstained) { $("answer").textContent = "The sources do not answer this question."; $("answer").className = "abstained"; }
  else renderAnswer(result.answer, result);
  const list = $("citations");
  if (result.citations.length) {
    list.append(el("h2", {}, "Citations"));
    for (const c of result.citations) {
      const row = el("p", {}, citeButton(c.n, result), " ", c.title || c.doc_id, " ", el("span", { class: "hint" }, `(${c.doc_id})`),
        " ", anchorLink(c.n, c, result));
      list.append(row);
    }
  }
  const body = $("sources").tBodies[0];
  for (const s of result.sources) {
    body.append(el("tr", {}, el("td", {}, s.n), el("td", {}, s.score.toFixed(3)), el("td", {}, s.retriever),
      el("td", {}, s.title || s.doc_id, el("br"), el("span", { class: "hint" }, s.section || s.doc_id), " ", anchorLink(s.n, s, result)),
      el("td", { class: "text" }, s.text.slice(0, 240) + (s.text.length > 240 ? "…" : ""))));
  }
  if (result.trace_text) { $("trace").textContent = result.trace_text; $("trace-box").hidden = false; }
  $("status").textContent = `${result.sources.length} sources`;
  $("answer").dataset.shown = String(++answersShown);
}

// Open the cited chunk inside its document, the answer's words highlighted in it.
async function openCitation(n, result) {
  const citation = result.citations.find((c) => c.n === n) || result.sources.find((s) => s.n === n);
  if (!citation) return;
  const response = await api("/v1/documents/" + encodeURIComponent(citation.doc_id));
  if (!response.ok) { $("status").textContent = await errorText(response); return; }
  const doc = await response.json();
  $("doc-title").textContent = `[${n}] ${doc.title || doc.doc_id}`;
  const body = $("doc-body"); body.textContent = "";
  let cited = null;
  for (const chunk of doc.chunks) {
    const isCited = chunk.chunk_id === citation.chunk_id;
    const node = el("div", { class: "chunk" + (isCited ? " cited" : ""), "data-chunk": chunk.chunk_id });
    const where = [chunk.section, anchorLabel(chunk)].filter(Boolean).join(" · ");
    if (where) node.append(el("div", { class: "hint" }, where));
    node.append(...(isCited ? highlight(chunk.text, result.answer) : [chunk.text]));
    body.append(node);
    if (isCited) cited = node;
  }
  $("doc-view").show();  // beside the answer, not over it
  if (cited) cited.scrollIntoView({ block: "center" });
}

function highlight(text, answer) {
  const needle = (answer || "").replace(/\s*\[\d+\]/g, "").trim();
  const at = needle ? text.toLowerCase().indexOf(needle.toLowerCase()) : -1;
  if (at < 0) return [el("mark", {}, text)];  // the answer is not verbatim in the chunk: the chunk supports it
  return [text.slice(0, at), el("mark", {}, text.slice(at, at + needle.length)), text.slice(at + needle.length)];
}

async function showEvals() {
  const response = await api("/v1/evals");
  if (!response.ok) { $("datasets").textContent = await errorText(response); return; }
  const data = await response.json();
  $("datasets").textContent = data.datasets.length ? "datasets: " + data.datasets.join(", ") : "no eval root on this server";
  const list = $("eval-list"); list.textContent = "";
  for (const run of data.runs) {
    const button = el("button", { type: "button" }, `${run.dataset} ${run.config || ""} ${run.status}`);
    button.addEventListener("click", () => showReport(run.id));
    list.append(button, " ");
  }
}

async function showReport(id) {
  const response = await api("/v1/evals/" + encodeURIComponent(id));
  const run = await response.json(); const box = $("eval-report"); box.textContent = "";
  box.append(el("h2", {}, `${run.dataset} (${run.status})`));
  if (run.error) box.append(el("pre", { class: "error" }, run.error));
  if (run.result) { box.append(plot(numbers(run.result))); box.append(el("pre", {}, JSON.stringify(run.result, null, 2))); }
}

// Every metric of a report, flattened to "path: value" for the bar plot.
function numbers(value, prefix = "", out = []) {
  if (typeof value === "number" && prefix.match(/(ndcg|recall|map|mrr|hit|precision|p@|r@|em|f1)/i)) out.push([prefix, value]);
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) numbers(v, prefix ? prefix + "." + k : k, out);
  return out.slice(0, 40);
}

function plot(rows) {
  const ns = "http://www.w3.org/2000/svg"; const width = 640; const bar = 16;
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", width); svg.setAttribute("height", rows.length * (bar + 4) + 4);
  rows.forEach(([label, v], i) => {
    const r = document.createElementNS(ns, "rect");
    r.setAttribute("class", "bar"); r.setAttribute("x", 260); r.setAttribute("y", i * (bar + 4));
    r.setAttribute("height", bar); r.setAttribute("width", Math.max(1, Math.min(1, v) * (width - 320)));
    const t = document.createElementNS(ns, "text");
    t.setAttribute("class", "bar-label"); t.setAttribute("x", 0); t.setAttribute("y", i * (bar + 4) + 12);
    t.textContent = `${label.slice(-40)}  ${v.toFixed(3)}`;
    svg.append(r, t);
  });
  return svg;
}

$("key-form").addEventListener("submit", (e) => { e.preventDefault(); login($("key").value.trim()); });
$("ask-form").addEventListener("submit", (e) => { e.preventDefault(); ask($("question").value.trim()).catch((x) => { $("status").textContent = String(x); }); });
$("logout").addEventListener("click", () => forget(""));
$("new-chat").addEventListener("click", newConversation);
document.querySelectorAll("nav [data-tab]").forEach((b) => b.addEventListener("click", () => {
  document.querySelectorAll("nav [data-tab]").forEach((o) => o.classList.toggle("active", o === b));
  $("tab-ask").hidden = b.dataset.tab !== "ask"; $("tab-evals").hidden = b.dataset.tab !== "evals";
  if (b.dataset.tab === "evals") showEvals();
}));
if (key) login(key);
