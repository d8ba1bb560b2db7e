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

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", widget);
  } else {
    widget();
  }
})();
