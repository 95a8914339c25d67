"use strict";
// The chat page: a client of the same /v1 API programs use. Markdown is
// rendered here, by marked, and sanitised by DOMPurify (both vendored, see
// docs/web.md), so a streamed answer is re-rendered as it grows.
(() => {
  const $ = (id) => document.getElementById(id);
  let token = sessionStorage.getItem("neo-token") || "";
  let current = "";       // the open conversation's ID
  let stream = null;      // the AbortController of its event stream
  let live = null;        // the answer being written, as an element
  let liveText = "";
  let liveFrame = 0;      // a pending re-render of the live answer
  let stopAsked = false;  // this page pressed Stop in the running turn
  let stick = true;       // the message list follows the newest message
  let picked = [];        // files chosen for the next message: {file, url}
  let titles = new Map(); // conversation ID -> title
  let stepBox = null;     // the running turn's list of tool steps

  // Plain words for what went wrong: never API wording.
  const unreachable = "The server can't be reached. Your message is kept here; check that neobot is running, then send it again.";
  const signedOut = "Your session has ended (the server restarted, or the sign-in link expired). Sign in again with a new link (neobot web prints one when it starts) or with your token.";

  class Gone extends Error {}   // the server does not know our token
  class Offline extends Error {}

  async function api(method, path, body, headers, raw) {
    let res;
    try {
      res = await fetch(path, {
        method,
        headers: Object.assign({ "Authorization": "Bearer " + token }, raw ? {} : { "Content-Type": "application/json" }, headers || {}),
        body: raw ? body : body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      online(false);
      throw new Offline(unreachable);
    }
    online(true);
    const data = await res.json().catch(() => ({}));
    if (res.status === 401) { signOut(signedOut); throw new Gone(signedOut); }
    if (!res.ok) throw new Error(data.error || "The server refused this (" + res.status + "); try again.");
    return data;
  }

  function online(on) {
    const net = $("net");
    if (on && navigator.onLine) { net.hidden = true; return; }
    net.textContent = navigator.onLine ? "Offline: the server can't be reached. Reconnecting…" : "Offline: this device has no network. Reconnecting when it is back…";
    net.hidden = false;
  }
  window.addEventListener("offline", () => online(false));
  window.addEventListener("online", () => { online(true); if (current) follow(current, lastEvent); });

  function showError(msg) {
    $("error").textContent = msg;
    $("error").hidden = !msg;
  }

  // --- markdown -------------------------------------------------------
  const escapeHTML = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  marked.use({ gfm: true, renderer: { html: (t) => escapeHTML(t.text || t.raw || "") } }); // raw HTML shows as text
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A") {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });

  // render puts text, as sanitised markdown, into el, with a copy button
  // on every code block.
  function render(el, text) {
    el.innerHTML = DOMPurify.sanitize(marked.parse(text).trim(), { FORBID_TAGS: ["style", "form", "input", "button", "img"], FORBID_ATTR: ["style"] });
    for (const pre of el.querySelectorAll("pre")) {
      const box = document.createElement("div");
      box.className = "code";
      pre.replaceWith(box);
      box.appendChild(pre);
      pre.tabIndex = 0; // a wide block scrolls sideways, by keyboard too
      const b = document.createElement("button");
      b.type = "button";
      b.className = "copy";
      b.textContent = "Copy";
      b.setAttribute("aria-label", "Copy code");
      b.addEventListener("click", async () => {
        try { await navigator.clipboard.writeText(pre.textContent); b.textContent = "Copied"; }
        catch { b.textContent = "Select and copy"; }
        setTimeout(() => { b.textContent = "Copy"; }, 1500);
      });
      box.appendChild(b);
    }
  }

  // --- the message list ------------------------------------------------
  const list = () => $("messages");
  function atBottom() { const m = list(); return m.scrollHeight - m.scrollTop - m.clientHeight < 48; }
  function follow_() {
    const m = list();
    if (stick) { m.scrollTop = m.scrollHeight; $("jump").hidden = true; }
    else $("jump").hidden = false;
  }
  list().addEventListener("scroll", () => { stick = atBottom(); if (stick) $("jump").hidden = true; });
  $("jump").addEventListener("click", () => { stick = true; follow_(); $("text").focus(); });

  function add(kind, text, files) {
    const el = document.createElement("div");
    el.className = "msg " + kind;
    if (kind === "assistant") render(el, text);
    else if (kind === "user") { const t = document.createElement("div"); t.className = "text"; t.textContent = text; el.appendChild(t); }
    else el.textContent = text;
    if (files && files.length) el.appendChild(fileList(files));
    list().appendChild(el);
    follow_();
    return el;
  }

  function fileList(files) {
    const box = document.createElement("div");
    box.className = "files";
    for (const f of files) {
      if (/^image\//.test(f.mime_type) && f.id) {
        const img = document.createElement("img");
        img.alt = f.name;
        box.appendChild(img);
        fetch("/v1/uploads/" + encodeURIComponent(f.id), { headers: { "Authorization": "Bearer " + token } })
          .then((r) => r.ok ? r.blob() : Promise.reject(new Error(String(r.status))))
          .then((b) => { img.src = URL.createObjectURL(b); img.addEventListener("load", follow_, { once: true }); })
          .catch(() => { img.replaceWith(Object.assign(document.createElement("span"), { className: "file", textContent: f.name + " (no longer kept)" })); });
      } else {
        const s = document.createElement("span");
        s.className = "file";
        s.textContent = f.name + " · " + size(f.size);
        box.appendChild(s);
      }
    }
    return box;
  }
  const size = (n) => n >= 1 << 20 ? (n / (1 << 20)).toFixed(1) + " MB" : n >= 1024 ? Math.round(n / 1024) + " KB" : n + " bytes";

  // toolFile shows a file a tool returned ({id, name, mime_type, size,
  // url}) with a button that downloads it (the URL needs the token, so
  // the page fetches it and hands the browser the bytes).
  function toolFile(f) {
    const el = document.createElement("div");
    el.className = "msg tool-file";
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = "Download " + f.name + " (" + size(f.size || 0) + ")";
    b.addEventListener("click", async () => {
      try {
        const r = await fetch(f.url, { headers: { "Authorization": "Bearer " + token } });
        if (!r.ok) throw new Error(r.status === 404 ? "This file is no longer kept (files live in memory, and not across a restart)." : "The file could not be downloaded; try again.");
        const a = document.createElement("a");
        a.href = URL.createObjectURL(await r.blob());
        a.download = f.name;
        a.click();
        setTimeout(() => URL.revokeObjectURL(a.href), 10000);
      } catch (e) { showError(e instanceof TypeError ? unreachable : e.message); }
    });
    if (/^image\/(png|jpeg|gif|webp)$/.test(f.mime_type || "")) {
      // A picture is shown too, fetched with the token like an upload.
      const img = document.createElement("img");
      img.alt = f.name;
      el.prepend(img);
      fetch(f.url, { headers: { "Authorization": "Bearer " + token } })
        .then((r) => r.ok ? r.blob() : Promise.reject(new Error(String(r.status))))
        .then((blob) => { img.src = URL.createObjectURL(blob); img.addEventListener("load", follow_, { once: true }); })
        .catch(() => { img.replaceWith(Object.assign(document.createElement("span"), { className: "file", textContent: f.name + " (no longer kept)" })); });
    }
    el.appendChild(b);
    list().appendChild(el);
    follow_();
  }

  // step shows a tool call ({id, plan, title, state, output}) in the
  // turn's compact list of steps: a mark for its state, its title, and
  // its output behind a button that expands it. Steps are not announced.
  const stepMarks = { in_progress: "Running", complete: "Done", error: "Failed" };
  function step(s) {
    if (!stepBox || !stepBox.isConnected) {
      stepBox = document.createElement("div");
      stepBox.className = "msg steps";
      stepBox.setAttribute("role", "group");
      stepBox.setAttribute("aria-label", "Steps");
      stepBox.appendChild(document.createElement("ul"));
      if (live) list().insertBefore(stepBox, live); else list().appendChild(stepBox);
    }
    let li = [...stepBox.querySelectorAll("li")].find((x) => x.dataset.id === s.id);
    if (!li) {
      li = document.createElement("li");
      li.dataset.id = s.id;
      const b = document.createElement("button");
      b.type = "button";
      b.setAttribute("aria-expanded", "false");
      const mark = document.createElement("span");
      mark.className = "state";
      const title = document.createElement("span");
      title.className = "title";
      b.append(mark, title);
      const out = document.createElement("pre");
      out.className = "output";
      out.id = "step-" + Math.random().toString(36).slice(2);
      out.hidden = true;
      out.tabIndex = 0;
      b.setAttribute("aria-controls", out.id);
      b.addEventListener("click", () => {
        const open = b.getAttribute("aria-expanded") !== "true";
        b.setAttribute("aria-expanded", String(open));
        out.hidden = !open;
        if (open) follow_();
      });
      li.append(b, out);
      stepBox.querySelector("ul").appendChild(li);
    }
    li.dataset.state = s.state;
    const mark = li.querySelector(".state");
    mark.textContent = s.state === "complete" ? "✓" : s.state === "error" ? "✗" : "";
    mark.setAttribute("aria-label", stepMarks[s.state] || s.state);
    mark.setAttribute("role", "img");
    li.querySelector(".title").textContent = s.title || s.id;
    li.querySelector(".output").textContent = s.output || (s.state === "in_progress" ? "Running…" : "No output.");
    follow_();
  }

  // thumb draws a thumbs-up (CSS turns it down for 👎): drawn rather than
  // an emoji, which not every system has a font for.
  function thumb() {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    const cuff = document.createElementNS(ns, "rect");
    for (const [k, v] of [["x", "2"], ["y", "10"], ["width", "4"], ["height", "11"], ["rx", "1"]]) cuff.setAttribute(k, v);
    const hand = document.createElementNS(ns, "path");
    hand.setAttribute("d", "M8 10 L12 3 C13.5 3 14.6 4.2 14.2 6 L13.4 10 H19 C20.6 10 21.6 11.4 21.1 12.9 L19.1 19.4 C18.8 20.4 18 21 17 21 H8 Z");
    svg.append(cuff, hand);
    return svg;
  }

  // feedback adds 👍/👎 to a final answer (el) of turn: 👎 opens a small
  // form for an optional reason; the rating is shown once stored.
  function feedback(el, turn) {
    if (!turn || !current) return;
    const conv = current;
    const box = document.createElement("div");
    box.className = "feedback";
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", "Rate this answer");
    const up = document.createElement("button");
    const down = document.createElement("button");
    const said = document.createElement("span");
    said.className = "said";
    said.setAttribute("role", "status");
    for (const [b, label] of [[up, "Good answer"], [down, "Bad answer"]]) {
      b.type = "button";
      b.className = "rate";
      b.appendChild(thumb());
      b.setAttribute("aria-label", label);
      b.setAttribute("aria-pressed", "false");
    }
    const form = document.createElement("form");
    form.className = "reason";
    form.hidden = true;
    const rid = "reason-" + Math.random().toString(36).slice(2);
    const label = Object.assign(document.createElement("label"), { htmlFor: rid, textContent: "What was wrong? (optional)" });
    const input = Object.assign(document.createElement("input"), { id: rid, maxLength: 500 });
    const send = Object.assign(document.createElement("button"), { type: "submit", textContent: "Send" });
    const skip = Object.assign(document.createElement("button"), { type: "button", textContent: "Cancel" });
    form.append(label, input, send, skip);
    async function rate(rating, reason) {
      said.textContent = "";
      try {
        const body = { turn, rating };
        if (reason) body.reason = reason;
        await api("POST", "/v1/conversations/" + encodeURIComponent(conv) + "/feedback", body);
        up.setAttribute("aria-pressed", String(rating === "up"));
        down.setAttribute("aria-pressed", String(rating === "down"));
        form.hidden = true;
        said.textContent = rating === "up" ? "Thanks for the rating." : "Thanks: noted" + (reason ? ", with your reason." : ".");
      } catch (e) {
        said.textContent = e instanceof Offline ? "The rating was not sent: the server can't be reached. Try again." : "The rating was not saved: " + e.message;
      }
    }
    up.addEventListener("click", () => rate("up"));
    down.addEventListener("click", () => { form.hidden = false; said.textContent = ""; input.focus(); });
    skip.addEventListener("click", () => { form.hidden = true; down.focus(); });
    form.addEventListener("submit", (e) => { e.preventDefault(); rate("down", input.value.trim()); });
    box.append(up, down, said, form);
    el.after(box); // beside the answer, not in its text
  }

  function working(on) {
    $("stop").hidden = !on;
    if (!on) { $("status").hidden = true; stopAsked = false; }
  }

  function announce(text) { $("announce").textContent = text; }

  function gate(g) {
    // Drawn once: a conversation read back lists it, and its event may
    // come again on the stream resumed after the read.
    if (document.querySelector('.gate[data-token="' + CSS.escape(g.token) + '"]')) return;
    const el = add("assistant gate", "");
    el.dataset.token = g.token;
    render(el, g.question);
    el.setAttribute("role", "group");
    el.setAttribute("aria-label", "Approval needed");
    const opts = document.createElement("div");
    opts.className = "options";
    g.options.forEach((o, i) => {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = o;
      if (g.approving[i]) b.className = "approve";
      b.addEventListener("click", async () => {
        opts.querySelectorAll("button").forEach((x) => { x.disabled = true; });
        try { await api("POST", "/v1/gates/" + encodeURIComponent(g.token) + "/answer", { option: i }); }
        catch (e) { opts.querySelectorAll("button").forEach((x) => { x.disabled = false; }); showError(e.message); }
      });
      opts.appendChild(b);
    });
    el.appendChild(opts);
    if (g.progress) progress(g);
    follow_();
    announce("Neo asks for approval: " + el.textContent);
  }

  // question shows what a tool's server asks ({token, question, options,
  // form}): a choice question's options are buttons answered by index;
  // a form ("Answer…" first) is filled in here (buttons for a choice or a
  // yes/no, inputs for text and numbers, defaults pre-filled) and sent
  // whole, a refused value's reason shown under its field; Decline and
  // Cancel are buttons beside it.
  const elicitOpen = "Answer…";
  function question(q) {
    const el = add("assistant gate question", "");
    el.dataset.token = q.token;
    render(el, q.question);
    el.setAttribute("role", "group");
    el.setAttribute("aria-label", "Question from a tool");
    const form = q.options[0] === elicitOpen && q.form && q.form.length ? askForm(q) : null;
    if (form) el.appendChild(form);
    const opts = document.createElement("div");
    opts.className = "options";
    const all = () => el.querySelectorAll(".options button, form button[type=submit]");
    if (q.url) { // a URL-mode question: its page opens in a new tab
      const a = document.createElement("a");
      a.className = "link-button";
      a.href = q.url;
      a.target = "_blank";
      a.rel = "noopener noreferrer";
      a.textContent = "Open link";
      opts.appendChild(a);
    }
    q.options.forEach((o, i) => {
      if (form && i === 0) return; // the form's own Send stands for "Answer…"
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = o;
      b.addEventListener("click", async () => {
        all().forEach((x) => { x.disabled = true; });
        try { await api("POST", "/v1/gates/" + encodeURIComponent(q.token) + "/answer", { option: i }); }
        catch (e) { all().forEach((x) => { x.disabled = false; }); showError(e.message); }
      });
      opts.appendChild(b);
    });
    if (form) form.querySelector(".actions").append(...opts.childNodes);
    else el.appendChild(opts);
    follow_();
    announce("Neo asks: " + el.textContent);
  }

  function askForm(q) {
    const form = document.createElement("form");
    form.className = "ask";
    form.noValidate = true; // the server checks, and says what to fix per field
    const values = {};      // field -> a chosen button's value
    for (const f of q.form) {
      const id = "q-" + q.token.slice(0, 12) + "-" + f.name.replace(/[^A-Za-z0-9_-]/g, "_");
      const row = document.createElement("div");
      row.className = "field";
      row.dataset.field = f.name;
      const problem = Object.assign(document.createElement("p"), { className: "problem", id: id + "-problem", hidden: true });
      const hint = f.description ? Object.assign(document.createElement("p"), { className: "hint", id: id + "-hint", textContent: f.description }) : null;
      const describe = (x) => x.setAttribute("aria-describedby", [hint ? hint.id : "", problem.id].join(" ").trim());
      const choices = f.enum && f.enum.length ? f.enum.map((v, i) => [v, (f.enum_titles || [])[i] || v])
        : f.type === "boolean" ? [["true", "Yes"], ["false", "No"]] : null;
      if (choices) {
        const group = document.createElement("div");
        group.className = "choices";
        group.setAttribute("role", "group");
        group.id = id;
        const name = Object.assign(document.createElement("span"), { className: "label", id: id + "-label", textContent: f.label + (f.required ? " (required)" : "") });
        group.setAttribute("aria-labelledby", name.id);
        describe(group);
        for (const [v, title] of choices) {
          const b = Object.assign(document.createElement("button"), { type: "button", textContent: title });
          b.dataset.value = v;
          b.setAttribute("aria-pressed", String(f.default === v));
          b.addEventListener("click", () => {
            values[f.name] = v;
            group.querySelectorAll("button").forEach((x) => x.setAttribute("aria-pressed", String(x === b)));
          });
          group.appendChild(b);
        }
        if (f.default) values[f.name] = f.default;
        row.append(name, group);
      } else {
        const label = Object.assign(document.createElement("label"), { htmlFor: id, textContent: f.label + (f.required ? " (required)" : "") });
        const input = document.createElement("input");
        input.id = id;
        input.name = f.name;
        input.type = f.type === "number" || f.type === "integer" ? "number"
          : ({ email: "email", uri: "url", date: "date", "date-time": "datetime-local" })[f.format] || "text";
        if (f.type === "integer") input.step = "1";
        if (f.type === "number") input.step = "any";
        if (f.minimum !== undefined) input.min = String(f.minimum);
        if (f.maximum !== undefined) input.max = String(f.maximum);
        if (f.default) input.value = f.default;
        if (f.required) input.setAttribute("aria-required", "true");
        describe(input);
        row.append(label, input);
      }
      if (hint) row.appendChild(hint);
      row.appendChild(problem);
      form.appendChild(row);
    }
    const actions = document.createElement("div");
    actions.className = "options actions";
    actions.appendChild(Object.assign(document.createElement("button"), { type: "submit", className: "approve", textContent: "Send answer" }));
    form.appendChild(actions);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const body = {};
      for (const f of q.form) {
        const input = form.querySelector('.field[data-field="' + CSS.escape(f.name) + '"] input');
        const v = input ? input.value.trim() : values[f.name];
        if (v !== undefined && v !== "") body[f.name] = v;
      }
      const buttons = form.querySelectorAll(".actions button");
      buttons.forEach((x) => { x.disabled = true; });
      try {
        await postForm(q.token, body);
      } catch (err) {
        buttons.forEach((x) => { x.disabled = false; });
        if (!err.problems) { showError(err.message); return; }
        let first = null;
        for (const row of form.querySelectorAll(".field")) {
          const said = err.problems[row.dataset.field];
          const p = row.querySelector(".problem");
          const input = row.querySelector("input, .choices");
          p.textContent = said || "";
          p.hidden = !said;
          if (said) { input.setAttribute("aria-invalid", "true"); first = first || input; } else input.removeAttribute("aria-invalid");
        }
        (first && first.matches("input") ? first : form.querySelector("[aria-invalid=true] button") || first)?.focus();
        announce("The answer was not sent: " + Object.values(err.problems).join(" "));
      }
    });
    return form;
  }

  // postForm sends a form's values; a 422's sentences per field come back
  // as the error's problems.
  async function postForm(tok, values) {
    let res;
    try {
      res = await fetch("/v1/gates/" + encodeURIComponent(tok) + "/form", {
        method: "POST", headers: { "Authorization": "Bearer " + token, "Content-Type": "application/json" }, body: JSON.stringify({ values }),
      });
    } catch { online(false); throw new Offline(unreachable.replace("Your message is kept here; c", "C").replace("send it again", "send the answer again")); }
    online(true);
    const data = await res.json().catch(() => ({}));
    if (res.status === 401) { signOut(signedOut); throw new Gone(signedOut); }
    if (res.ok) return data;
    const err = new Error(data.error || "The server refused this answer (" + res.status + "); try again.");
    if (res.status === 422 && data.problems) err.problems = data.problems;
    throw err;
  }

  // progress shows how far an approval under a quorum has come
  // ({token, progress}: "1 of 2 approvals: @ann").
  function progress(d) {
    const el = document.querySelector('.gate[data-token="' + CSS.escape(d.token) + '"]');
    if (!el) return;
    let p = el.querySelector("p.progress");
    if (!p) {
      p = document.createElement("p");
      p.className = "progress";
      el.insertBefore(p, el.querySelector(".options"));
    }
    p.textContent = d.progress;
  }

  function decided(d) {
    const el = document.querySelector('.gate[data-token="' + CSS.escape(d.token) + '"]');
    if (!el) return;
    el.querySelector(".options")?.remove();
    el.querySelector("form.ask")?.remove();
    // Drawn once more by the turn's instance when another took the click.
    el.querySelector(".outcome")?.remove();
    const p = document.createElement("p");
    p.className = "outcome";
    p.textContent = el.classList.contains("question")
      ? (d.state === "approved" ? "Answered" + (d.by ? " by " + d.by : "") : d.state === "denied" ? (d.answer ? d.answer + (d.by ? " by " + d.by : "") : "Not answered") : "Expired")
      : d.state === "approved" ? "Approved (" + d.answer + ") by " + d.by
      : d.state === "denied" ? (d.by ? "Denied (" + d.answer + ") by " + d.by : "Denied") : "Expired";
    el.appendChild(p);
    follow_();
  }

  // stopped marks the live answer as cut short by Stop, keeping its words.
  function stopped(text) {
    if (!live && !text) return;
    if (!live) { live = add("assistant", ""); }
    if (text) liveText = text;
    render(live, liveText);
    live.classList.add("stopped");
    const mark = document.createElement("span");
    mark.className = "mark";
    mark.textContent = "Stopped";
    live.appendChild(mark);
    live = null;
    follow_();
  }

  function handle(type, data) {
    switch (type) {
      case "message": add("user", data.text, data.files); stepBox = null; working(true); stick = true; follow_(); break;
      case "status": $("status").textContent = data.text; $("status").hidden = false; break;
      case "answer.delta":
        if (!live) { live = add("assistant", ""); liveText = ""; }
        liveText += data.text;
        $("status").hidden = true;
        if (!liveFrame) liveFrame = requestAnimationFrame(() => { liveFrame = 0; if (live) { render(live, liveText); follow_(); } });
        break;
      case "answer.stopped": cancelAnimationFrame(liveFrame); liveFrame = 0; stopped(data.text); break;
      case "answer.retracted":
        cancelAnimationFrame(liveFrame); liveFrame = 0;
        if (stopAsked) stopped(""); else if (live) live.remove();
        live = null; break;
      case "answer":
        cancelAnimationFrame(liveFrame); liveFrame = 0;
        { const el = live || add("assistant", ""); render(el, data.text); feedback(el, data.turn); follow_(); }
        live = null; stepBox = null; working(false); announce(data.text);
        refresh().catch(report); // a first answer stores the conversation under its title
        break;
      case "notice": add("notice", data.text); working(false); announce(data.text); break;
      case "file": toolFile(data); break;
      case "step": step(data); break;
      case "gate.invoked": gate(data); break;
      case "question.asked": question(data); break;
      case "gate.decided": decided(data); break;
      case "gate.updated": progress(data); break;
      case "reset": open(current).catch(report); break;
    }
  }

  // follow reads the conversation's Server-Sent Events with fetch (which,
  // unlike EventSource, sends the Authorization header), resuming after
  // a dropped connection with Last-Event-ID.
  let lastEvent = "";
  async function follow(id, last) {
    if (stream) stream.abort();
    const ctl = new AbortController();
    stream = ctl;
    lastEvent = last;
    let wait = 500;
    while (!ctl.signal.aborted) {
      try {
        const res = await fetch("/v1/conversations/" + id + "/events", {
          headers: { "Authorization": "Bearer " + token, "Last-Event-ID": lastEvent }, signal: ctl.signal,
        });
        if (res.status === 401) { signOut(signedOut); return; }
        if (res.status === 404) { showError("This conversation is no longer there; it may have been deleted."); return; }
        if (!res.ok) throw new Error(String(res.status));
        online(true);
        wait = 500;
        const reader = res.body.getReader();
        const dec = new TextDecoder();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += dec.decode(value, { stream: true });
          let end;
          while ((end = buf.indexOf("\n\n")) >= 0) {
            const raw = buf.slice(0, end);
            buf = buf.slice(end + 2);
            let ev = "", data = "", eid = "";
            for (const line of raw.split("\n")) {
              if (line.startsWith("event: ")) ev = line.slice(7);
              else if (line.startsWith("data: ")) data += line.slice(6);
              else if (line.startsWith("id: ")) eid = line.slice(4);
            }
            if (eid) lastEvent = eid;
            if (ev) handle(ev, JSON.parse(data || "{}"));
          }
        }
      } catch (e) {
        if (ctl.signal.aborted) return;
      }
      if (ctl.signal.aborted) return;
      online(false);
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 5000);
      // A server that came back has forgotten our session: find out.
      if (!ctl.signal.aborted) { try { await api("GET", "/v1/me"); } catch (e) { if (e instanceof Gone) return; } }
    }
  }

  function showTitle(id) {
    $("title").textContent = (id && titles.get(id)) || "New conversation";
    $("rename").hidden = $("delete").hidden = !id;
  }

  async function open(id) {
    current = id;
    live = null;
    stepBox = null;
    stick = true;
    working(false);
    showError("");
    closeMenu();
    $("rename-form").hidden = true;
    $("confirm-delete").hidden = true;
    $("title").hidden = false;
    list().textContent = "";
    markCurrent();
    showTitle(id);
    if (!id) { if (stream) stream.abort(); stream = null; return; }
    const conv = await api("GET", "/v1/conversations/" + id);
    if (current !== id) return;
    for (const m of conv.messages) {
      const el = add(m.role, m.text, m.files);
      if (m.stopped) { live = el; liveText = m.text; stopped(""); }
    }
    for (const g of conv.approvals || []) gate(g); // asked before the stream resumes
    stick = true;
    follow_();
    follow(id, conv.last_event_id);
  }

  function markCurrent() {
    document.querySelectorAll("#conversations button").forEach((b) => {
      if (b.dataset.id === current) b.setAttribute("aria-current", "true"); else b.removeAttribute("aria-current");
    });
  }

  async function refresh() {
    const q = $("search").value.trim();
    const { conversations } = await api("GET", "/v1/conversations" + (q ? "?q=" + encodeURIComponent(q) : ""));
    const ul = $("conversations");
    ul.textContent = "";
    for (const c of conversations) {
      titles.set(c.id, c.title || "Conversation");
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.id = c.id;
      b.textContent = c.title || "Conversation";
      b.addEventListener("click", () => open(c.id).catch(report));
      li.appendChild(b);
      ul.appendChild(li);
    }
    $("no-match").hidden = !(q && conversations.length === 0);
    markCurrent();
    if (current) showTitle(current);
    return conversations;
  }

  function report(e) { if (!(e instanceof Gone)) showError(e.message); }

  function signOut(msg) {
    token = "";
    sessionStorage.removeItem("neo-token");
    if (stream) stream.abort();
    stream = null;
    $("app").hidden = true;
    $("signin").hidden = false;
    $("signin-error").textContent = msg ? msg[0].toUpperCase() + msg.slice(1) : "";
    $("token").focus();
  }

  async function start() {
    if (!token) { signOut($("signin-error").textContent); return; }
    let me;
    try { me = await api("GET", "/v1/me"); }
    catch (e) {
      if (!(e instanceof Gone)) signOut(e.message);
      return;
    }
    // A link to connect an MCP account brought us here: say who is
    // signed in, and go where neobot says (it refuses anyone else).
    const connecting = sessionStorage.getItem("neo-connect");
    if (connecting) {
      sessionStorage.removeItem("neo-connect");
      try { location.assign((await api("POST", "/v1/connect", { state: connecting })).url); return; }
      catch (e) { report(e); }
    }
    $("user").textContent = me.user;
    $("signin").hidden = true;
    $("signin-error").textContent = "";
    $("app").hidden = false;
    $("text").value = sessionStorage.getItem("neo-draft") || $("text").value;
    $("text").focus();
    try {
      const all = await refresh();
      const keep = sessionStorage.getItem("neo-open");
      const pick = all.find((c) => c.id === keep) || all[0];
      await open(pick ? pick.id : "");
    } catch (e) { report(e); }
    $("text").focus();
  }

  // --- composing -------------------------------------------------------
  $("text").addEventListener("input", () => sessionStorage.setItem("neo-draft", $("text").value));
  $("file").addEventListener("change", () => {
    for (const f of $("file").files) picked.push({ file: f });
    $("file").value = "";
    showPicked();
  });
  function showPicked() {
    const ul = $("picked");
    ul.textContent = "";
    picked.forEach((p, i) => {
      const li = document.createElement("li");
      li.textContent = p.file.name + " · " + size(p.file.size) + " ";
      const x = document.createElement("button");
      x.type = "button";
      x.textContent = "×";
      x.setAttribute("aria-label", "Remove " + p.file.name);
      x.addEventListener("click", () => { picked.splice(i, 1); showPicked(); $("text").focus(); });
      li.appendChild(x);
      ul.appendChild(li);
    });
  }

  async function upload(p) {
    if (p.id) return p;
    const up = await api("POST", "/v1/uploads?name=" + encodeURIComponent(p.file.name), p.file, { "Content-Type": p.file.type || "application/octet-stream" }, true);
    p.id = up.id;
    return p;
  }

  let sending = false;
  $("composer").addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = $("text").value.trim();
    if ((!text && picked.length === 0) || sending) return;
    sending = true;
    sessionStorage.setItem("neo-draft", $("text").value); // kept should the session end before it is taken
    $("send").disabled = true;
    showError("");
    try {
      if (!current) {
        const { id } = await api("POST", "/v1/conversations", {});
        titles.set(id, "New conversation");
        await refresh();
        await open(id);
      }
      for (const p of picked) await upload(p);
      const body = { text: text || "(files attached)" };
      if (picked.length) body.files = picked.map((p) => p.id);
      await api("POST", "/v1/conversations/" + current + "/messages", body, { "Idempotency-Key": crypto.randomUUID() });
      // Accepted: only now is the typed message let go.
      $("text").value = "";
      sessionStorage.removeItem("neo-draft");
      picked = [];
      showPicked();
      sessionStorage.setItem("neo-open", current);
      refresh().catch(report);
    } catch (err) { report(err); }
    finally { sending = false; $("send").disabled = false; }
  });
  $("text").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); $("composer").requestSubmit(); }
  });
  $("stop").addEventListener("click", () => {
    stopAsked = true;
    api("POST", "/v1/conversations/" + current + "/stop", {}).catch(report);
  });

  // --- conversations ---------------------------------------------------
  $("new").addEventListener("click", async () => {
    showError("");
    try {
      const { id } = await api("POST", "/v1/conversations", {});
      titles.set(id, "New conversation");
      $("search").value = "";
      await refresh();
      await open(id);
    } catch (e) { report(e); }
    $("text").focus();
  });
  let searching = 0;
  $("search").addEventListener("input", () => {
    clearTimeout(searching);
    searching = setTimeout(() => refresh().catch(report), 200);
  });
  $("rename").addEventListener("click", () => {
    $("rename-text").value = titles.get(current) || "";
    $("title").hidden = true;
    $("rename").hidden = $("delete").hidden = true;
    $("rename-form").hidden = false;
    $("rename-text").focus();
    $("rename-text").select();
  });
  function endRename() {
    $("rename-form").hidden = true;
    $("title").hidden = false;
    showTitle(current);
  }
  $("rename-cancel").addEventListener("click", endRename);
  $("rename-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const title = $("rename-text").value.trim();
    if (!title) return;
    try {
      await api("PATCH", "/v1/conversations/" + current, { title });
      titles.set(current, title);
      endRename();
      await refresh();
    } catch (err) { report(err); }
  });
  $("delete").addEventListener("click", () => { $("confirm-delete").hidden = false; $("delete-no").focus(); });
  $("delete-no").addEventListener("click", () => { $("confirm-delete").hidden = true; $("delete").focus(); });
  $("delete-yes").addEventListener("click", async () => {
    try {
      await api("DELETE", "/v1/conversations/" + current);
      titles.delete(current);
      sessionStorage.removeItem("neo-open");
      const all = await refresh();
      await open(all.length ? all[0].id : "");
      announce("Conversation deleted.");
    } catch (e) { report(e); }
    $("text").focus();
  });
  function closeMenu() { $("app").classList.remove("menu-open"); $("menu").setAttribute("aria-expanded", "false"); }
  $("menu").addEventListener("click", () => {
    const open = !$("app").classList.contains("menu-open");
    $("app").classList.toggle("menu-open", open);
    $("menu").setAttribute("aria-expanded", String(open));
    if (open) $("search").focus();
  });

  // --- signing in ------------------------------------------------------
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    token = $("token").value.trim();
    $("token").value = "";
    $("signin-error").textContent = "";
    sessionStorage.setItem("neo-token", token);
    start();
  });

  const hash = new URLSearchParams(location.hash.slice(1));
  const connect = hash.get("connect");
  if (connect) {
    sessionStorage.setItem("neo-connect", connect); // kept through signing in
    history.replaceState(null, "", location.pathname);
  }
  const login = hash.get("login");
  if (login) {
    history.replaceState(null, "", location.pathname);
    fetch("/v1/login", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ code: login }) })
      .then((r) => r.json().catch(() => ({})).then((d) => ({ ok: r.ok, d })))
      .then(({ ok, d }) => {
        if (ok) { token = d.token; sessionStorage.setItem("neo-token", token); start(); return; }
        signOut(d.error || "This sign-in link did not work; ask for a new one (neobot web prints one when it starts).");
      }, () => signOut(unreachable.replace("Your message is kept here; c", "C").replace("send it again", "open the link again")));
  } else {
    start();
  }
})();
