"use strict";
// The admin page: each place's settings, as the places' admins see and
// change them, through /v1/admin (docs/governance.md). A web user signs in
// with the chat page's token (kept in this tab, as the chat page keeps it);
// Sign in with Slack comes back with a session in the address's fragment.
(() => {
  const $ = (id) => document.getElementById(id);
  const from = new URLSearchParams(location.hash.slice(1));
  if (from.get("session")) {
    sessionStorage.setItem("neo-admin", from.get("session"));
    history.replaceState(null, "", location.pathname);
  }
  let token = sessionStorage.getItem("neo-admin") || sessionStorage.getItem("neo-token") || "";
  let open = null; // the place being edited: its newest version as read

  const unreachable = "The server can't be reached; check that neobot is running, then try again.";

  class Refused extends Error {}

  async function api(method, path, body) {
    let res;
    try {
      res = await fetch(path, {
        method,
        headers: { "Authorization": "Bearer " + token, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new Error(unreachable);
    }
    const data = await res.json().catch(() => ({}));
    if (res.status === 401 || data.ended || (res.status === 403 && path === "/v1/admin/me")) {
      signOut(data.error, data);
      throw new Refused(data.error);
    }
    if (!res.ok) {
      const err = new Error(data.error || "The server answered " + res.status + "; try again.");
      err.status = res.status;
      throw err;
    }
    return data;
  }

  // signOut shows the sign-in, offering the sign-ins the server says
  // are set up (offers: an answer of the admin API).
  function signOut(message, offers) {
    token = "";
    sessionStorage.removeItem("neo-admin");
    $("app").hidden = true;
    $("signin").hidden = false;
    $("signin-error").textContent = message || "";
    $("slack-signin").hidden = !(offers && offers.slack_signin);
    $("discord-signin").hidden = !(offers && offers.discord_signin);
  }

  // say shows text in element id, hiding the messages shown before.
  function say(id, text) {
    $("error").hidden = $("edit-error").hidden = $("edit-saved").hidden = true;
    if (id) {
      $(id).textContent = text;
      $(id).hidden = false;
    }
  }

  const when = (at) => at ? at.replace("T", " ").replace(/\.\d+/, "").replace("Z", "") : "";

  async function start() {
    if (!token) {
      const probe = await fetch("/v1/admin/me").then((r) => r.json()).catch(() => ({}));
      signOut("", probe);
      return;
    }
    let me;
    try {
      me = await api("GET", "/v1/admin/me");
    } catch (e) {
      if (!(e instanceof Refused)) signOut(e.message);
      return;
    }
    $("who").textContent = me.by;
    $("skills").replaceChildren(...(me.skills || []).map((name) => Object.assign(document.createElement("option"), { value: name })));
    $("scope").textContent = me.team ? " (admin of Slack workspace " + me.team + ": its places only)"
      : me.guilds && me.guilds.length ? " (manager of Discord server " + me.guilds.join(", ") + ": its places only)" : "";
    $("signin").hidden = true;
    $("app").hidden = false;
    await places();
  }

  async function places() {
    let vs;
    try {
      vs = await api("GET", "/v1/admin/places");
    } catch (e) {
      if (!(e instanceof Refused)) say("error", e.message);
      return;
    }
    const list = $("places");
    list.replaceChildren();
    for (const v of vs) {
      const li = document.createElement("li");
      const name = document.createElement("strong");
      name.textContent = v.place;
      const meta = document.createElement("span");
      meta.className = "hint";
      meta.textContent = "skill " + (v.settings.skill || "(the file's)") + " · version " + v.version + ", by " + v.by + " at " + when(v.at) + " UTC";
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = "Edit";
      b.setAttribute("aria-label", "Edit " + v.place);
      b.addEventListener("click", () => edit(v.place));
      li.append(name, meta, b);
      list.append(li);
    }
    $("no-places").hidden = vs.length > 0;
  }

  async function edit(place) {
    let h;
    try {
      h = await api("GET", "/v1/admin/places/history?" + new URLSearchParams({ place }));
    } catch (e) {
      if (!(e instanceof Refused)) say("error", e.message);
      return;
    }
    open = h.length ? h[h.length - 1] : { place, version: 0, settings: {} };
    const s = open.settings;
    $("edit-title").textContent = "Settings of " + place;
    $("edit-version").textContent = open.version ? open.version + ", by " + open.by + " at " + when(open.at) + " UTC" : "0 (never set)";
    $("f-skill").value = s.skill || "";
    $("f-instructions").value = s.instructions || "";
    $("f-model").value = s.model || "";
    $("f-daily").value = s.daily_tokens || "";
    $("f-spend").value = s.spend === undefined || s.spend === null ? "" : String(s.spend);
    $("f-approvers").value = (s.approvers || []).join(", ");
    const list = $("history");
    list.replaceChildren();
    for (const v of h.slice().reverse()) {
      const li = document.createElement("li");
      const head = document.createElement("strong");
      head.textContent = "Version " + v.version;
      const meta = document.createElement("span");
      meta.className = "hint";
      meta.textContent = "by " + v.by + " at " + when(v.at) + " UTC";
      const what = document.createElement("span");
      what.className = "changes";
      what.textContent = changes(v.before || {}, v.settings).join("\n") || "(nothing changed)";
      li.append(head, meta, what);
      list.append(li);
    }
    $("no-history").hidden = h.length > 0;
    $("editor").hidden = false;
    $("edit-title").tabIndex = -1;
    $("edit-title").focus();
  }

  // changes lists what differs, as "field: before → after".
  function changes(a, b) {
    const show = (v, none) => v === undefined || v === null || v === "" || v === 0 || (Array.isArray(v) && !v.length) ? none : Array.isArray(v) ? v.join(",") : typeof v === "string" ? JSON.stringify(v) : String(v);
    const out = [];
    for (const [k, none] of [["skill", "(the file's)"], ["instructions", "(the file's)"], ["model", "(the file's)"], ["daily_tokens", "(the file's)"], ["spend", "(as the skill says)"], ["approvers", "(none)"]]) {
      const x = show(a[k], none), y = show(b[k], none);
      if (x !== y) out.push(k + ": " + x + " → " + y);
    }
    return out;
  }

  $("edit-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const spend = $("f-spend").value;
    const settings = {
      skill: $("f-skill").value.trim(),
      instructions: $("f-instructions").value,
      model: $("f-model").value.trim(),
      daily_tokens: Number($("f-daily").value || 0),
      approvers: $("f-approvers").value.split(",").map((x) => x.trim()).filter(Boolean),
    };
    if (spend) settings.spend = spend === "true";
    try {
      const v = await api("POST", "/v1/admin/places", { place: open.place, version: open.version + 1, settings });
      await places();
      await edit(v.place);
      say("edit-saved", "Saved version " + v.version + " of " + v.place + ". It applies from the next turn there, on every instance.");
    } catch (e) {
      if (!(e instanceof Refused)) say("edit-error", e.message);
    }
  });

  $("edit-cancel").addEventListener("click", () => { $("editor").hidden = true; open = null; });

  $("open-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    say();
    edit($("open-place").value.trim());
  });

  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    token = $("token").value.trim();
    $("token").value = "";
    sessionStorage.setItem("neo-admin", token);
    start();
  });

  // Signing out ends a Slack or Discord sign-in on the server (every instance); a
  // web token is forgotten in this tab.
  $("signout").addEventListener("click", async () => {
    sessionStorage.removeItem("neo-token");
    let message = "";
    if (token.startsWith("neoadm_")) {
      const res = await fetch("/v1/admin/signout", { method: "POST", headers: { "Authorization": "Bearer " + token } }).catch(() => null);
      if (!res || !res.ok) {
        const data = res ? await res.json().catch(() => ({})) : {};
        message = "This page forgot your sign-in, but the server could not end it: " + (data.error || unreachable) + " It ends by itself within 8 hours.";
      }
    }
    const probe = await fetch("/v1/admin/me").then((r) => r.json()).catch(() => ({}));
    signOut(message, probe);
  });

  start();
})();
