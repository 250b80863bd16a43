// The wall: follows the server's snapshots (server-sent events on /events) and
// draws them. Every text from the snapshot goes in as text (textContent),
// never as markup: a player's name is whatever the player typed.
"use strict";
(() => {
  const WIDE = 900; // px: narrower is a phone, one scrolling column
  const ROWS_PER_COLUMN = 18; // standings rows before the list splits in two (three)
  const STATES = {registering: "registration open", seating: "seating",
                  playing: "playing", finished: "final standings"};
  const byId = (id) => document.getElementById(id);
  let last = null;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  const shortFp = (fp) => fp.replace(/-/g, "").slice(0, 4);

  // A name shown with the start of its key where two keys go by it.
  function namer(people) {
    const keys = new Map();
    for (const p of people) {
      if (!keys.has(p.name)) keys.set(p.name, new Set());
      keys.get(p.name).add(p.fp);
    }
    return (p) => {
      const span = el("span", "name", p.name);
      if (keys.get(p.name).size > 1) span.append(" ", el("span", "fp", shortFp(p.fp)));
      return span;
    };
  }

  function row(cells, className) {
    const line = el("div", className);
    for (const cell of cells) line.append(cell);
    return line;
  }

  function standings(rows) {
    const box = byId("standings");
    box.replaceChildren();
    if (rows.length === 0) {
      box.append(el("p", "empty", "No games counted yet."));
      return;
    }
    const name = namer(rows);
    const tiebreak = rows.some((r) => r.tiebreak !== 0);
    const kind = tiebreak ? "row tb" : "row";
    const columns = window.innerWidth < WIDE ? 1
      : Math.min(3, Math.ceil(rows.length / ROWS_PER_COLUMN));
    const per = Math.ceil(rows.length / columns);
    for (let c = 0; c < columns; c++) {
      const column = el("div", "col");
      const head = ["#", "Player", "W", "Pts", "G"].map(
        (t) => el("span", t === "Player" ? "name" : "", t));
      if (tiebreak) head.push(el("span", "", "TB"));
      column.append(row(head, kind + " head"));
      for (const r of rows.slice(c * per, (c + 1) * per)) {
        const cells = [el("span", "place", r.place), name(r), el("span", "", r.wins),
                       el("span", "", r.points), el("span", "", r.games)];
        if (tiebreak) cells.push(el("span", "", r.tiebreak));
        column.append(row(cells, r.place === 1 ? kind + " lead" : kind));
      }
      box.append(column);
    }
  }

  const tableTitle = (t) => (t.length <= 2 ? "Table " + t : t);

  function card(title, state, players, scored, over) {
    const box = el("article", over ? "card over" : "card");
    const head = el("h3", "", "");
    head.append(el("span", "name", title));
    if (state) head.append(el("span", "state", state));
    box.append(head);
    const list = el("ol");
    const name = namer(players);
    const order = scored ? [...players].sort((a, b) => b.score - a.score) : players;
    for (const p of order) {
      const item = el("li");
      item.append(name(p));
      if (scored) item.append(el("span", "score", p.score));
      list.append(item);
    }
    box.append(list);
    return box;
  }

  function tables(list) {
    byId("tables-box").hidden = list.length === 0;
    const over = list.every((t) => t.state === "over" || t.state === "finished");
    byId("tables-title").textContent = over ? "Latest games" : "Tables";
    byId("tables").replaceChildren(...list.map((t) => {
      const done = t.state === "over" || t.state === "finished";
      const state = done ? "final" : (t.round > 0 ? "round " + t.round : t.state);
      return card(tableTitle(t.table), state, t.players, true, done);
    }));
  }

  // The seating of the game being played, or of the next one.
  function next(seating, current) {
    byId("next-box").hidden = seating === null;
    if (seating === null) return;
    byId("next-title").textContent =
      (seating.game === current ? "Seating: game " : "Next: game ") + seating.game;
    byId("next").replaceChildren(...seating.tables.map(
      (t) => card(tableTitle(t.table), "", t.players, false, false)));
  }

  function render(snapshot) {
    const event = snapshot.event;
    byId("event").textContent = event.name;
    document.title = event.name + ": standings";
    const state = STATES[event.state] || event.state;
    byId("progress").textContent = event.games > 0
      ? "Game " + event.game + " of " + event.games + " · " + state : state;
    standings(snapshot.standings);
    tables(snapshot.tables);
    next(snapshot.next, event.game);
    byId("missing-box").hidden = snapshot.missing.length === 0;
    byId("missing").textContent = snapshot.missing.join(", ");
    byId("side").hidden = byId("side").querySelectorAll("section:not([hidden])").length === 0;
    document.querySelector("main").classList.toggle("alone", byId("side").hidden);
    fit();
  }

  // On a wide screen: the largest type at which everything shows without scrolling.
  function fit() {
    const root = document.documentElement;
    const fits = (scale) => {
      root.style.setProperty("--scale", String(scale));
      return root.scrollHeight <= window.innerHeight && root.scrollWidth <= window.innerWidth;
    };
    if (window.innerWidth < WIDE) {
      fits(1);
      return;
    }
    let low = 0.3;
    let high = 1.5;
    if (fits(high)) return;
    for (let i = 0; i < 9; i++) {
      const middle = (low + high) / 2;
      if (fits(middle)) low = middle; else high = middle;
    }
    fits(low);
  }

  function linked(up) {
    const link = byId("link");
    link.className = up ? "up" : "down";
    link.textContent = up ? "live" : "reconnecting…";
  }

  const source = new EventSource("/events");
  source.onopen = () => linked(true);
  source.onerror = () => linked(false);
  source.onmessage = (message) => {
    linked(true);
    try {
      last = JSON.parse(message.data);
      render(last);
    } catch (error) {
      console.error("the wall could not show a snapshot", error);
    }
  };
  let resizing = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => { if (last !== null) render(last); }, 150);
  });
})();
