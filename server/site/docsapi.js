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

  function start() {
    widget();
    searchBox();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
