"use strict";
// The chat page: a client of the same /v1 API programs use.
(() => {
  const $ = (id) => document.getElementById(id);
  let token = sessionStorage.getItem("neo-token") || "";
  let current = "";       // the open conversation's ID
  let stream = null;      // the AbortController of its event stream
  let live = null;        // the answer being written, as an element
  let liveText = "";

  async function api(method, path, body, headers) {
    const res = await fetch(path, {
      method,
      headers: Object.assign({ "Authorization": "Bearer " + token, "Content-Type": "application/json" }, headers || {}),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data.error || res.statusText);
    return data;
  }

  // markdown renders the little markdown answers use, escaping everything
  // else: code blocks, inline code, bold, italics, links, lists, paragraphs.
  function markdown(text) {
    const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
    const inline = (s) => esc(s)
      .replace(/`([^`]+)`/g, "<code>$1</code>")
      .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
      .replace(/(^|[^*])\*([^*]+)\*/g, "$1<em>$2</em>")
      .replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, '<a href="$2" rel="noopener noreferrer" target="_blank">$1</a>');
    const out = [];
    const parts = text.split(/^```.*$/m);
    parts.forEach((part, i) => {
      if (i % 2 === 1) { out.push("<pre><code>" + esc(part.replace(/^\n/, "")) + "</code></pre>"); return; }
      for (const block of part.split(/\n{2,}/)) {
        if (!block.trim()) continue;
        const lines = block.split("\n");
        if (lines.every((l) => /^\s*[-*] /.test(l))) {
          out.push("<ul>" + lines.map((l) => "<li>" + inline(l.replace(/^\s*[-*] /, "")) + "</li>").join("") + "</ul>");
        } else {
          out.push("<p>" + lines.map(inline).join("<br>") + "</p>");
        }
      }
    });
    return out.join("");
  }

  function add(kind, text) {
    const el = document.createElement("div");
    el.className = "msg " + kind;
    if (kind === "assistant") el.innerHTML = markdown(text); else el.textContent = text;
    $("messages").appendChild(el);
    $("messages").scrollTop = $("messages").scrollHeight;
    return el;
  }

  function working(on) {
    $("stop").hidden = !on;
    if (!on) $("status").hidden = true;
  }

  function gate(g) {
    const el = add("assistant gate", "");
    el.dataset.token = g.token;
    el.innerHTML = markdown(g.question);
    const opts = document.createElement("div");
    opts.className = "options";
    g.options.forEach((o, i) => {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = o;
      if (g.approving[i]) b.className = "approve";
      b.addEventListener("click", async () => {
        try { await api("POST", "/v1/gates/" + encodeURIComponent(g.token) + "/answer", { option: i }); }
        catch (e) { add("notice", e.message); }
      });
      opts.appendChild(b);
    });
    el.appendChild(opts);
  }

  function decided(d) {
    const el = document.querySelector('.gate[data-token="' + CSS.escape(d.token) + '"]');
    if (!el) return;
    el.querySelector(".options")?.remove();
    const p = document.createElement("p");
    p.className = "outcome";
    p.textContent = d.state === "approved" ? "Approved (" + d.answer + ") by " + d.by
      : d.state === "denied" ? (d.by ? "Denied (" + d.answer + ") by " + d.by : "Denied") : "Expired";
    el.appendChild(p);
  }

  function handle(type, data) {
    switch (type) {
      case "message": add("user", data.text); working(true); break;
      case "status": $("status").textContent = data.text; $("status").hidden = false; break;
      case "answer.delta":
        if (!live) { live = add("assistant", ""); liveText = ""; }
        liveText += data.text;
        live.innerHTML = markdown(liveText);
        $("status").hidden = true;
        break;
      case "answer.retracted": if (live) live.remove(); live = null; break;
      case "answer":
        if (live) live.innerHTML = markdown(data.text); else add("assistant", data.text);
        live = null; working(false); break;
      case "notice": add("notice", data.text); working(false); break;
      case "gate.invoked": gate(data); break;
      case "gate.decided": decided(data); break;
      case "reset": open(current); break;
    }
  }

  // follow reads the conversation's Server-Sent Events with fetch (which,
  // unlike EventSource, sends the Authorization header), resuming after
  // a dropped connection with Last-Event-ID.
  async function follow(id, last) {
    if (stream) stream.abort();
    const ctl = new AbortController();
    stream = ctl;
    while (!ctl.signal.aborted) {
      try {
        const res = await fetch("/v1/conversations/" + id + "/events", {
          headers: { "Authorization": "Bearer " + token, "Last-Event-ID": last }, signal: ctl.signal,
        });
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
            if (eid) last = eid;
            if (ev) handle(ev, JSON.parse(data || "{}"));
          }
        }
      } catch (e) {
        if (ctl.signal.aborted) return;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  async function open(id) {
    current = id;
    live = null;
    working(false);
    $("messages").textContent = "";
    document.querySelectorAll("#conversations button").forEach((b) => b.classList.toggle("current", b.dataset.id === id));
    const conv = await api("GET", "/v1/conversations/" + id);
    for (const m of conv.messages) add(m.role, m.text);
    follow(id, conv.last_event_id);
  }

  async function refresh() {
    const { conversations } = await api("GET", "/v1/conversations");
    const ul = $("conversations");
    ul.textContent = "";
    for (const c of conversations) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.id = c.id;
      b.textContent = c.title || "Conversation";
      b.classList.toggle("current", c.id === current);
      b.addEventListener("click", () => open(c.id));
      li.appendChild(b);
      ul.appendChild(li);
    }
    return conversations;
  }

  async function start() {
    try {
      const me = await api("GET", "/v1/me");
      $("user").textContent = me.user;
    } catch (e) {
      sessionStorage.removeItem("neo-token");
      $("signin").hidden = false;
      $("signin-error").textContent = token ? e.message : "";
      return;
    }
    $("signin").hidden = true;
    $("app").hidden = false;
    const list = await refresh();
    if (list.length > 0) await open(list[0].id);
  }

  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem("neo-token", token);
    start();
  });
  $("new").addEventListener("click", async () => {
    const { id } = await api("POST", "/v1/conversations", {});
    await refresh();
    await open(id);
  });
  $("composer").addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = $("text").value.trim();
    if (!text) return;
    if (!current) {
      const { id } = await api("POST", "/v1/conversations", {});
      await open(id);
    }
    $("text").value = "";
    try {
      await api("POST", "/v1/conversations/" + current + "/messages", { text }, { "Idempotency-Key": crypto.randomUUID() });
      refresh();
    } catch (err) { add("notice", err.message); }
  });
  $("text").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("composer").requestSubmit(); }
  });
  $("stop").addEventListener("click", () => api("POST", "/v1/conversations/" + current + "/stop", {}).catch((e) => add("notice", e.message)));

  const login = new URLSearchParams(location.hash.slice(1)).get("login");
  if (login) {
    history.replaceState(null, "", location.pathname);
    fetch("/v1/login", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ code: login }) })
      .then((r) => r.json().then((d) => ({ ok: r.ok, d })))
      .then(({ ok, d }) => {
        if (ok) { token = d.token; sessionStorage.setItem("neo-token", token); }
        else { $("signin-error").textContent = d.error; }
        start();
      });
  } else {
    start();
  }
})();
