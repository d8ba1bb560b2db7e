/*
 * docsapi.js: reader feedback and search events for a documentation site,
 * sent to the self-hosted docsapi server that serves this file. No
 * dependencies, no cookies, nothing stored in the browser.
 *
 *   <script src="https://docs-api.example.com/v1/site/PROJECT/docsapi.js"
 *           data-token="site_..." defer></script>
 *
 * It renders a "Was this page helpful?" widget into #docsapi-feedback (or
 * at the end of <main>; data-widget="off" renders none), styled by
 * docsapi.css from beside this file, which it adds to the page's head
 * (data-style="off" adds none; see that file for how a site restyles the
 * widget), and offers:
 *
 *   DocsAPI.search(query, openedPath)       a search, and the result opened
 *   DocsAPI.codeFeedback({code, filename, lang, comment})
 *   DocsAPI.feedback({helpful, comment, contact})
 *
 * Events go to POST .../feedback and .../searches with the site token in
 * the query, as JSON sent as text/plain: a "simple" cross-origin request,
 * which needs no preflight and which navigator.sendBeacon can send while
 * the page unloads.
 *
 * With data-search-key="mint_dsc_..." (an assistant key: public, bound to
 * the site's origins) and data-domain="..." (the project's domain), it
 * also renders a search box into #docsapi-search, which asks the server's
 * POST /discovery/v1/search/{domain} as the reader types and links each
 * result to its section on this site (following one asks .../page for
 * it, which counts the search's click). The box is a WAI-ARIA combobox:
 * arrows move through the results, Enter opens one, Escape clears.
 *
 * With data-ask="on" as well, it renders an "Ask" panel into #docsapi-ask
 * (or at the end of <main>), which asks the server's
 * POST /discovery/v2/assistant/{domain}/message with the same key and
 * domain and shows the answer as it streams (an AI SDK v5 UI message
 * stream), as text (paragraphs and `code` built as elements, nothing
 * parsed as HTML), with the sources its search found as links (a site
 * path or an http(s) URL; anything else is shown as text). Follow-ups
 * continue the thread, whose ID and key are kept in memory only: a
 * reload starts a new one. Stop (or Escape) ends an answer.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || window.DocsAPI) {
    return;
  }
  var base = script.src.replace(/\/docsapi\.js(?:[?#].*)?$/, "");
  var token = script.getAttribute("data-token") || "";

  function send(endpoint, body, unloading) {
    var url = base + "/" + endpoint + "?token=" + encodeURIComponent(token);
    var data = JSON.stringify(body);
    if (unloading && navigator.sendBeacon) {
      try {
        if (navigator.sendBeacon(url, new Blob([data], { type: "text/plain;charset=UTF-8" }))) {
          return Promise.resolve(true);
        }
      } catch (e) {
        /* fall back to fetch */
      }
    }
    return fetch(url, {
      method: "POST",
      body: data,
      headers: { "Content-Type": "text/plain;charset=UTF-8" },
      credentials: "omit",
      keepalive: true
    }).then(function (r) { return r.ok; }, function () { return false; });
  }

  function pagePath() {
    return location.pathname || "/";
  }

  var api = {
    search: function (query, openedPath) {
      var body = { query: String(query || "") };
      if (openedPath) {
        body.clickedPath = String(openedPath);
      }
      return send("searches", body, !!openedPath);
    },
    codeFeedback: function (f) {
      f = f || {};
      var body = { path: f.path || pagePath(), code: String(f.code || "") };
      ["filename", "lang", "comment"].forEach(function (k) {
        if (f[k] != null && f[k] !== "") {
          body[k] = String(f[k]);
        }
      });
      return send("feedback", body, false);
    },
    feedback: function (f) {
      f = f || {};
      var body = { path: f.path || pagePath(), helpful: !!f.helpful };
      if (f.comment != null && f.comment !== "") {
        body.comment = String(f.comment);
      }
      if (f.contact) {
        body.contact = String(f.contact);
      }
      if (f.website) {
        body.website = String(f.website);
      }
      return send("feedback", body, !!f.unloading);
    }
  };
  window.DocsAPI = api;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text) {
      e.textContent = text;
    }
    return e;
  }

  // stylesheet adds docsapi.css first in the head, so that the site's own
  // stylesheets come after it and win any tie; a page that links it
  // already gets no second copy. A stylesheet, not a <style> element or
  // style attributes, so that a page's Content-Security-Policy only needs
  // this server's origin in style-src, as it has it in script-src.
  function stylesheet() {
    if (script.getAttribute("data-style") === "off") {
      return;
    }
    var href = base + "/docsapi.css";
    var links = document.querySelectorAll('link[rel~="stylesheet"]');
    for (var i = 0; i < links.length; i++) {
      if (links[i].href === href) {
        return;
      }
    }
    var head = document.head || document.documentElement;
    head.insertBefore(el("link", { rel: "stylesheet", href: href }), head.firstChild);
  }

  function widget() {
    if (script.getAttribute("data-widget") === "off") {
      return;
    }
    stylesheet();
    var mount = document.getElementById("docsapi-feedback");
    if (!mount) {
      mount = el("div", { id: "docsapi-feedback" });
      (document.querySelector("main") || document.body).appendChild(mount);
    }
    var form = el("form", { "class": "docsapi-feedback", "aria-label": "Page feedback" });
    var question = el("p", { "class": "docsapi-question" }, "Was this page helpful?");
    var yes = el("button", { type: "button", "class": "docsapi-vote", "data-helpful": "true" }, "Yes");
    var no = el("button", { type: "button", "class": "docsapi-vote", "data-helpful": "false" }, "No");
    var more = el("div", { "class": "docsapi-more", hidden: "" });
    var comment = el("textarea", { name: "comment", maxlength: "2000", rows: "3" });
    var contact = el("input", { name: "contact", type: "email", maxlength: "254", autocomplete: "email" });
    // The honeypot: hidden from people and from assistive technology; a bot
    // that fills every field fills it, and its submission is dropped. It is
    // moved off screen through the style object, which a page's
    // Content-Security-Policy allows where it forbids style attributes, so
    // that it stays hidden without the stylesheet too.
    var trap = el("input", { name: "website", type: "text", "class": "docsapi-hp", tabindex: "-1", autocomplete: "off", "aria-hidden": "true" });
    trap.style.position = "absolute";
    trap.style.left = "-10000px";
    trap.style.width = trap.style.height = "1px";
    trap.style.overflow = "hidden";
    var submit = el("button", { type: "submit", "class": "docsapi-send" }, "Send");
    var skip = el("button", { type: "button", "class": "docsapi-skip" }, "No thanks");
    var status = el("p", { "class": "docsapi-status", role: "status", "aria-live": "polite" });
    var commentLabel = el("label", { "class": "docsapi-field" }, "Tell us more (optional) ");
    commentLabel.appendChild(comment);
    var contactLabel = el("label", { "class": "docsapi-field" }, "Your email, if we may reply (optional) ");
    contactLabel.appendChild(contact);
    [commentLabel, contactLabel, trap, submit, skip].forEach(function (c) { more.appendChild(c); });
    [question, yes, no, more, status].forEach(function (c) { form.appendChild(c); });
    mount.appendChild(form);

    var vote = null; // the vote not sent yet
    function done(ok) {
      more.hidden = true;
      yes.disabled = no.disabled = true;
      status.textContent = ok ? "Thank you for your feedback." : "Sorry, your feedback could not be sent.";
    }
    function sendVote(withText, unloading) {
      if (vote === null) {
        return Promise.resolve(false);
      }
      var f = { helpful: vote, website: trap.value, unloading: unloading };
      if (withText) {
        f.comment = comment.value;
        f.contact = contact.value;
      }
      vote = null;
      return api.feedback(f);
    }
    function onVote(e) {
      vote = e.currentTarget.getAttribute("data-helpful") === "true";
      yes.setAttribute("aria-pressed", String(vote));
      no.setAttribute("aria-pressed", String(!vote));
      more.hidden = false;
      comment.focus();
    }
    yes.addEventListener("click", onVote);
    no.addEventListener("click", onVote);
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      sendVote(true, false).then(done);
    });
    skip.addEventListener("click", function () { sendVote(false, false).then(done); });
    // A vote given and then left with the page is still a vote.
    addEventListener("pagehide", function () { sendVote(false, true); });
  }

  // The search box's settings. The API's root is the script's URL without
  // its /v1/site/{projectId}/docsapi.js.
  var searchKey = script.getAttribute("data-search-key") || "";
  var searchDomain = script.getAttribute("data-domain") || "";
  var apiRoot = script.src.replace(/\/v1\/site\/[^\/]+\/docsapi\.js(?:[?#].*)?$/, "");

  // searchPageSize is how many results the box asks for and shows.
  var searchPageSize = 8;
  // searchDelay is how long, in milliseconds, typing must pause before the
  // box asks: a search per word, not per keystroke.
  var searchDelay = 150;

  // sameSite returns href resolved against the page if it is on the page's
  // own origin, else "": a result links to a section of this site, never
  // elsewhere, whatever the index says.
  function sameSite(href) {
    try {
      var u = new URL(String(href || ""), location.href);
      return u.origin === location.origin ? u.href : "";
    } catch (e) {
      return "";
    }
  }

  function searchBox() {
    var mount = document.getElementById("docsapi-search");
    if (!mount || !searchKey || !searchDomain) {
      return;
    }
    stylesheet();
    var ids = "docsapi-search-" + Math.random().toString(36).slice(2, 8);
    var box = el("div", { "class": "docsapi-search", role: "search", "aria-label": "Documentation" });
    var label = el("label", { "class": "docsapi-search-label", "for": ids + "-input" }, "Search the documentation");
    var input = el("input", {
      id: ids + "-input", type: "search", role: "combobox", autocomplete: "off", spellcheck: "false",
      maxlength: "200", placeholder: "Search…", "aria-autocomplete": "list", "aria-expanded": "false",
      "aria-controls": ids + "-results"
    });
    var list = el("ul", { id: ids + "-results", "class": "docsapi-results", role: "listbox", "aria-label": "Search results", hidden: "" });
    var status = el("p", { "class": "docsapi-search-status", role: "status", "aria-live": "polite" });
    [label, input, list, status].forEach(function (c) { box.appendChild(c); });
    mount.appendChild(box);

    var options = []; // the shown results' <li>, in order
    var paths = [];   // their pages' paths, as the search answered them
    var active = -1;  // the index in options of the highlighted one
    var timer = 0;
    var inFlight = false;
    var wanted = "";  // the query the box should show results for
    var current = ""; // the query asked, or answered and shown

    function say(text) {
      status.textContent = text;
    }
    function setActive(i) {
      if (active >= 0 && options[active]) {
        options[active].setAttribute("aria-selected", "false");
      }
      active = i;
      if (i < 0) {
        input.removeAttribute("aria-activedescendant");
        return;
      }
      options[i].setAttribute("aria-selected", "true");
      input.setAttribute("aria-activedescendant", options[i].id);
      options[i].scrollIntoView({ block: "nearest" });
    }
    function close() {
      current = "";
      setActive(-1);
      options = [];
      paths = [];
      list.replaceChildren();
      list.hidden = true;
      input.setAttribute("aria-expanded", "false");
    }
    // opened tells the server which result the reader opened: fetching
    // the page's content after a search is how the search endpoint's
    // clicks count (its click-through rate, its top clicked page). Sent
    // with keepalive, so that it outlives this page.
    function opened(i) {
      var path = paths[i];
      if (!path) {
        return;
      }
      try {
        fetch(apiRoot + "/discovery/v1/page/" + encodeURIComponent(searchDomain), {
          method: "POST",
          headers: { "Authorization": "Bearer " + searchKey, "Content-Type": "application/json" },
          body: JSON.stringify({ path: path }),
          credentials: "omit",
          mode: "cors",
          keepalive: true
        }).catch(function () { /* a click not counted is no error to show */ });
      } catch (e) {
        /* likewise */
      }
    }
    function open(i) {
      var href = options[i].firstChild.getAttribute("href");
      if (href) {
        opened(i);
        location.assign(href);
      }
    }
    // result is one result's option: its title, its section's heading and
    // its snippet, the matches in <mark>. Text only through textContent:
    // what the index holds is the repository's text, never markup to run.
    function result(r, i) {
      var md = r && typeof r.metadata === "object" && r.metadata ? r.metadata : {};
      var href = sameSite(md.href || r.path);
      var li = el("li", { id: ids + "-result-" + i, role: "option", "aria-selected": "false", "class": "docsapi-result" });
      var a = el("a", { tabindex: "-1" });
      if (href) {
        a.setAttribute("href", href);
      }
      var title = String(md.title || r.path || "");
      a.appendChild(el("span", { "class": "docsapi-result-title" }, title));
      if (md.heading && md.heading !== title) {
        a.appendChild(el("span", { "class": "docsapi-result-heading" }, String(md.heading)));
      }
      var snippet = el("span", { "class": "docsapi-result-snippet" });
      var parts = Array.isArray(md.snippet) ? md.snippet : [{ text: String(r.content || ""), match: false }];
      parts.forEach(function (p) {
        var text = String(p && p.text != null ? p.text : "");
        snippet.appendChild(p && p.match ? el("mark", {}, text) : document.createTextNode(text));
      });
      a.appendChild(snippet);
      li.appendChild(a);
      a.addEventListener("click", function () {
        if (href) {
          opened(i);
        }
      });
      li.addEventListener("mousemove", function () {
        if (active !== i) {
          setActive(i);
        }
      });
      return li;
    }
    function show(query, results) {
      close();
      current = query;
      results.forEach(function (r, i) {
        var li = result(r, i);
        options.push(li);
        paths.push(typeof r.path === "string" ? r.path : "");
        list.appendChild(li);
      });
      if (options.length > 0) {
        list.hidden = false;
        input.setAttribute("aria-expanded", "true");
      }
      var n = options.length;
      say(n === 0 ? "No results for “" + query + "”." : n === 1 ? "1 result." : n + " results.");
    }
    function refused(r) {
      if (r.status === 429) {
        return "Too many searches; try again in a moment.";
      }
      return "Search is not available on this page.";
    }
    // ask sends the wanted query, one request at a time: an answer for a
    // query the reader has since changed is dropped, and the query they
    // typed meanwhile is asked next.
    function ask() {
      var query = wanted;
      if (inFlight || query === "" || query === current) {
        return;
      }
      inFlight = true;
      current = query;
      fetch(apiRoot + "/discovery/v1/search/" + encodeURIComponent(searchDomain), {
        method: "POST",
        headers: { "Authorization": "Bearer " + searchKey, "Content-Type": "application/json" },
        body: JSON.stringify({ query: query, pageSize: searchPageSize }),
        credentials: "omit",
        mode: "cors"
      }).then(function (r) {
        if (!r.ok) {
          return { error: refused(r) };
        }
        return r.json().then(function (v) {
          return Array.isArray(v) ? { results: v } : { error: "Search is not available on this page." };
        });
      }).catch(function () {
        // A network failure, or the server refused this page's origin
        // (CORS): the browser tells the script no more than that.
        return { error: "Search is not available on this page." };
      }).then(function (a) {
        inFlight = false;
        if (query !== wanted) {
          ask();
          return;
        }
        if (a.error) {
          current = ""; // asked again when typed again
          close();
          say(a.error);
          return;
        }
        show(query, a.results);
      });
    }
    function typed() {
      clearTimeout(timer);
      wanted = input.value.trim();
      if (wanted === "") {
        close();
        say("");
        return;
      }
      timer = setTimeout(ask, searchDelay);
    }
    function clear() {
      clearTimeout(timer);
      input.value = "";
      wanted = "";
      close();
      say("");
    }

    input.addEventListener("input", typed);
    input.addEventListener("keydown", function (e) {
      var n = options.length;
      switch (e.key) {
        case "ArrowDown":
          if (n > 0) {
            e.preventDefault();
            setActive(active + 1 < n ? active + 1 : 0);
          }
          break;
        case "ArrowUp":
          if (n > 0) {
            e.preventDefault();
            setActive(active > 0 ? active - 1 : n - 1);
          }
          break;
        case "Enter":
          if (active >= 0) {
            e.preventDefault();
            open(active);
          }
          break;
        case "Escape":
          if (input.value !== "" || n > 0) {
            e.preventDefault();
            clear();
          }
          break;
      }
    });
    // A press on a result keeps the focus in the input, so that the
    // results stay up until the link is followed.
    list.addEventListener("mousedown", function (e) { e.preventDefault(); });
    box.addEventListener("focusout", function (e) {
      if (!box.contains(e.relatedTarget)) {
        list.hidden = true;
        input.setAttribute("aria-expanded", "false");
        setActive(-1);
      }
    });
    input.addEventListener("focus", function () {
      if (options.length > 0) {
        list.hidden = false;
        input.setAttribute("aria-expanded", "true");
      }
    });
  }

  // The "Ask" panel's settings: it asks the same domain with the same key
  // as the search box.
  var askOn = script.getAttribute("data-ask") === "on";
  // askPageSize is how many sections the assistant is asked to retrieve
  // (the platform advises 5).
  var askPageSize = 5;
  // askMaxLength bounds a question, in characters, as the input does.
  var askMaxLength = 2000;

  // sourceHref returns the link of a source of an answer: a path of this
  // site (one starting with "/") or an http(s) URL, resolved; "" for
  // anything else (javascript:, data:, a relative name) and for what
  // does not parse, which is then shown as text, never followed.
  function sourceHref(href) {
    href = String(href || "");
    if (href.charAt(0) !== "/" && !/^https?:\/\//i.test(href)) {
      return "";
    }
    try {
      return new URL(href, location.href).href;
    } catch (e) {
      return "";
    }
  }

  // answerBlocks splits an answer's Markdown into the blocks the panel
  // renders: paragraphs and fenced code. Other Markdown stays as text.
  function answerBlocks(text) {
    var out = [];
    var cur = null;
    text.split("\n").forEach(function (line) {
      var fence = /^\s*```/.test(line);
      if (cur && cur.pre) {
        if (fence) {
          cur = null;
        } else {
          cur.lines.push(line);
        }
        return;
      }
      if (fence) {
        cur = { pre: true, lines: [] };
        out.push(cur);
        return;
      }
      if (line.trim() === "") {
        cur = null;
        return;
      }
      if (!cur) {
        cur = { pre: false, lines: [] };
        out.push(cur);
      }
      cur.lines.push(line);
    });
    return out;
  }

  // answerBlock builds one block's element, its text as text nodes only
  // (the answer is a model's output: it could say anything, markup
  // included), `code` spans as <code>.
  function answerBlock(b) {
    if (b.pre) {
      var pre = el("pre", { "class": "docsapi-ask-code" });
      pre.appendChild(el("code", {})).textContent = b.lines.join("\n");
      return pre;
    }
    var p = el("p", {});
    var parts = b.lines.join("\n").split("`");
    if (parts.length % 2 === 0) {
      // An unclosed backtick is a backtick.
      parts.splice(parts.length - 2, 2, parts[parts.length - 2] + "`" + parts[parts.length - 1]);
    }
    parts.forEach(function (s, i) {
      if (i % 2 === 1) {
        p.appendChild(el("code", {})).textContent = s;
      } else if (s !== "") {
        p.appendChild(document.createTextNode(s));
      }
    });
    return p;
  }

  // streamEvents reads a server-sent event stream from reader and calls
  // onData with each event's data (its data: lines joined); it resolves
  // when the stream ends and rejects when reading fails (a cut
  // connection, a stop).
  function streamEvents(reader, onData) {
    var decoder = new TextDecoder();
    var buf = "";
    var data = [];
    function lines(final) {
      var i;
      while ((i = buf.indexOf("\n")) >= 0) {
        var line = buf.slice(0, i).replace(/\r$/, "");
        buf = buf.slice(i + 1);
        if (line === "") {
          if (data.length > 0) {
            onData(data.join("\n"));
          }
          data = [];
          continue;
        }
        var colon = line.indexOf(":");
        var field = colon < 0 ? line : line.slice(0, colon);
        if (field === "data") {
          data.push(colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, ""));
        }
      }
      if (final) {
        // An event the stream did not finish with a blank line is
        // dropped, as EventSource drops it.
        return;
      }
      return reader.read().then(function (r) {
        if (r.done) {
          buf += decoder.decode();
          return lines(true);
        }
        buf += decoder.decode(r.value, { stream: true });
        return lines(false);
      });
    }
    return lines(false);
  }

  function askPanel() {
    if (!askOn || !searchKey || !searchDomain) {
      return;
    }
    stylesheet();
    var mount = document.getElementById("docsapi-ask");
    if (!mount) {
      mount = el("div", { id: "docsapi-ask" });
      (document.querySelector("main") || document.body).appendChild(mount);
    }
    var ids = "docsapi-ask-" + Math.random().toString(36).slice(2, 8);
    var panel = el("section", { "class": "docsapi-ask", "aria-labelledby": ids + "-title" });
    var title = el("h2", { id: ids + "-title", "class": "docsapi-ask-title" }, "Ask the documentation");
    var form = el("form", { "class": "docsapi-ask-form" });
    var label = el("label", { "for": ids + "-input", "class": "docsapi-ask-label" }, "Your question");
    var row = el("div", { "class": "docsapi-ask-row" });
    var input = el("input", { id: ids + "-input", type: "text", autocomplete: "off", maxlength: String(askMaxLength), enterkeyhint: "send" });
    var submit = el("button", { type: "submit", "class": "docsapi-ask-send" }, "Ask");
    var stop = el("button", { type: "button", "class": "docsapi-ask-stop", hidden: "" }, "Stop");
    [input, submit, stop].forEach(function (c) { row.appendChild(c); });
    [label, row].forEach(function (c) { form.appendChild(c); });
    // The conversation: each question and its answer, a log that screen
    // readers announce as it grows (aria-busy while an answer streams, so
    // that it is read once whole rather than word by word).
    var log = el("div", { "class": "docsapi-ask-log", role: "log", "aria-live": "polite", "aria-label": "Answers" });
    var status = el("p", { "class": "docsapi-ask-status", role: "status", "aria-live": "polite" });
    var restart = el("button", { type: "button", "class": "docsapi-ask-new", hidden: "" }, "New conversation");
    [title, form, log, status, restart].forEach(function (c) { panel.appendChild(c); });
    mount.appendChild(panel);

    // The thread, in memory only: a follow-up continues it, another page
    // or a reload starts a new one. Its key is the thread's only
    // credential and is kept nowhere else.
    var threadId = "";
    var threadKey = "";
    var history = []; // this thread's messages, in the UI message shape
    var generation = 0; // counts the threads started, so that an answer
    // stopped by "New conversation" touches the new thread in nothing
    var controller = null; // the answer streaming, if one is

    function messageId() {
      return "m" + Date.now().toString(36) + Math.random().toString(36).slice(2, 10);
    }
    function refused(r) {
      if (r.status === 429) {
        return "Too many questions; try again in a moment.";
      }
      if (r.status === 404 && threadId) {
        return "This conversation is no longer available; ask again to start a new one.";
      }
      return "The assistant is not available on this page.";
    }
    function reset() {
      threadId = threadKey = "";
      history = [];
      generation++;
      restart.hidden = true;
    }

    function ask(question) {
      var exchange = el("div", { "class": "docsapi-ask-exchange" });
      exchange.appendChild(el("p", { "class": "docsapi-ask-question" }, question));
      var searching = el("p", { "class": "docsapi-ask-searching", hidden: "" }, "Searching the documentation…");
      var answer = el("div", { "class": "docsapi-ask-answer" });
      var sources = el("div", { "class": "docsapi-ask-sources", hidden: "" });
      var failed = el("p", { "class": "docsapi-ask-error", hidden: "" });
      [searching, answer, sources, failed].forEach(function (c) { exchange.appendChild(c); });
      log.appendChild(exchange);

      var text = "";
      var textId = null;
      var stable = 0; // the answer's blocks rendered for good
      var tools = {}; // tool call ID to tool name
      var finished = false;
      var error = "";
      var shown = {}; // sources' links shown
      var gen = generation;
      var messages = history;

      function render(final) {
        var blocks = answerBlocks(text);
        var keep = Math.min(stable, blocks.length);
        while (answer.childNodes.length > keep) {
          answer.removeChild(answer.lastChild);
        }
        for (var i = keep; i < blocks.length; i++) {
          answer.appendChild(answerBlock(blocks[i]));
        }
        // A block followed by another is complete; the last may grow.
        stable = final ? blocks.length : Math.max(blocks.length - 1, 0);
      }
      function fail(message) {
        failed.textContent = message;
        failed.hidden = false;
      }
      function showSources(list) {
        if (!Array.isArray(list)) {
          return;
        }
        var ul = sources.querySelector("ul");
        if (!ul) {
          sources.appendChild(el("p", { "class": "docsapi-ask-sources-title" }, "Sources"));
          ul = sources.appendChild(el("ul", {}));
        }
        list.forEach(function (s) {
          if (!s || typeof s !== "object") {
            return;
          }
          var md = s.metadata && typeof s.metadata === "object" ? s.metadata : {};
          var href = sourceHref(md.href || s.url || s.path);
          var name = String(md.title || s.path || s.url || "");
          // Sections of one page are told apart by their heading; two
          // that read the same are listed once.
          var heading = md.heading && md.heading !== md.title ? String(md.heading) : "";
          var seen = (href ? href.replace(/#.*$/, "") : "text:" + name) + "\n" + heading;
          if (name === "" || shown[seen]) {
            return;
          }
          shown[seen] = true;
          var li = el("li", {});
          var line = li.appendChild(href ? el("a", { href: href }, name) : el("span", {}, name));
          if (heading) {
            line.appendChild(el("span", { "class": "docsapi-ask-source-heading" }, " › " + heading));
          }
          ul.appendChild(li);
        });
        sources.hidden = ul.childNodes.length === 0;
      }
      function onEvent(data) {
        if (data === "[DONE]") {
          return;
        }
        var ev;
        try {
          ev = JSON.parse(data);
        } catch (e) {
          return;
        }
        if (!ev || typeof ev !== "object") {
          return;
        }
        switch (ev.type) {
          case "tool-input-start":
          case "tool-input-available":
            tools[ev.toolCallId] = ev.toolName;
            if (ev.toolName === "search" && !sources.querySelector("li")) {
              searching.hidden = false;
              status.textContent = "Searching the documentation…";
            }
            break;
          case "tool-output-available":
          case "tool-output-error":
            if (tools[ev.toolCallId] === "search") {
              searching.hidden = true;
              status.textContent = "Answering…";
              if (ev.type === "tool-output-available") {
                showSources(ev.output);
              }
            }
            break;
          case "text-delta":
            if (textId !== null && ev.id !== textId && text !== "") {
              text += "\n\n"; // another text part: another paragraph
            }
            textId = ev.id;
            text += String(ev.delta == null ? "" : ev.delta);
            render(false);
            break;
          case "message-metadata":
          case "finish":
            var md = ev.messageMetadata;
            if (md && typeof md.threadId === "string" && !threadId && gen === generation) {
              threadId = md.threadId;
            }
            if (ev.type === "finish") {
              finished = true;
            }
            break;
          case "error":
            error = String(ev.errorText || "the assistant failed");
            break;
        }
      }

      messages.push({ id: messageId(), role: "user", parts: [{ type: "text", text: question }] });
      var body = {
        fp: "anonymous",
        messages: messages,
        currentPath: pagePath().slice(0, 200),
        retrievalPageSize: askPageSize
      };
      if (threadId && threadKey) {
        body.threadId = threadId;
        body.threadKey = threadKey;
      }
      controller = new AbortController();
      var mine = controller;
      submit.disabled = true;
      stop.hidden = false;
      log.setAttribute("aria-busy", "true");
      status.textContent = "Asking…";
      var reached = false;
      fetch(apiRoot + "/discovery/v2/assistant/" + encodeURIComponent(searchDomain) + "/message", {
        method: "POST",
        headers: { "Authorization": "Bearer " + searchKey, "Content-Type": "application/json" },
        body: JSON.stringify(body),
        credentials: "omit",
        mode: "cors",
        signal: mine.signal
      }).then(function (r) {
        reached = true;
        if (!r.ok || !r.body) {
            error = refused(r);
          if (r.status === 404 && threadId && gen === generation) {
            reset();
          }
          return;
        }
        if (!threadId && gen === generation) {
          threadId = r.headers.get("X-Thread-Id") || "";
          threadKey = r.headers.get("X-Thread-Key") || "";
        }
        return streamEvents(r.body.getReader(), onEvent);
      }).then(function () {
        if (!error && !finished) {
          error = "The answer was cut off. Try asking again.";
        }
      }, function () {
        if (mine.signal.aborted) {
          error = "Stopped.";
        } else if (!reached) {
          // A network failure, or the server refused this page's origin
          // (CORS): the browser tells the script no more than that.
          error = "The assistant is not available on this page.";
        } else {
          error = "The answer was cut off. Try asking again.";
        }
      }).then(function () {
        render(true);
        searching.hidden = true;
        if (error) {
          fail(error);
        }
        if (text !== "") {
          messages.push({ id: messageId(), role: "assistant", parts: [{ type: "text", text: text }] });
        } else {
          messages.pop(); // a question left unanswered is asked anew
        }
        if (threadId && threadKey && gen === generation) {
          restart.hidden = false;
        }
        controller = null;
        submit.disabled = false;
        stop.hidden = true;
        log.removeAttribute("aria-busy");
        // The log reads the answer out once it is whole; the status
        // line's work is done.
        status.textContent = "";
        if (document.activeElement === stop || document.activeElement === document.body) {
          input.focus();
        }
      });
    }

    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var question = input.value.trim();
      if (controller || question === "") {
        return;
      }
      input.value = "";
      ask(question);
    });
    stop.addEventListener("click", function () {
      if (controller) {
        controller.abort();
      }
    });
    input.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && controller) {
        e.preventDefault();
        controller.abort();
      }
    });
    restart.addEventListener("click", function () {
      if (controller) {
        controller.abort();
      }
      reset();
      log.replaceChildren();
      status.textContent = "";
      input.focus();
    });
  }

  function start() {
    askPanel();
    widget();
    searchBox();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
