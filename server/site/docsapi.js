/*
 * docsapi.js: reader feedback and search events for a documentation site,
 * sent to the self-hosted docsapi server that serves this file. No
 * dependencies, no cookies, nothing stored in the browser.
 *
 *   <script src="https://docs-api.example.com/v1/site/PROJECT/docsapi.js"
 *           data-token="site_..." defer></script>
 *
 * It renders a "Was this page helpful?" widget into #docsapi-feedback (or
 * at the end of <main>; data-widget="off" renders none), and offers:
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

  function widget() {
    if (script.getAttribute("data-widget") === "off") {
      return;
    }
    var mount = document.getElementById("docsapi-feedback");
    if (!mount) {
      mount = el("div", { id: "docsapi-feedback" });
      (document.querySelector("main") || document.body).appendChild(mount);
    }
    var form = el("form", { "class": "docsapi-feedback", "aria-label": "Page feedback" });
    var question = el("p", {}, "Was this page helpful?");
    var yes = el("button", { type: "button", "data-helpful": "true" }, "Yes");
    var no = el("button", { type: "button", "data-helpful": "false" }, "No");
    var more = el("div", { hidden: "" });
    var comment = el("textarea", { name: "comment", maxlength: "2000", rows: "3" });
    var contact = el("input", { name: "contact", type: "email", maxlength: "254", autocomplete: "email" });
    // The honeypot: hidden from people and from assistive technology; a bot
    // that fills every field fills it, and its submission is dropped.
    var trap = el("input", { name: "website", type: "text", tabindex: "-1", autocomplete: "off", "aria-hidden": "true",
      style: "position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden" });
    var submit = el("button", { type: "submit" }, "Send");
    var skip = el("button", { type: "button" }, "No thanks");
    var status = el("p", { role: "status", "aria-live": "polite" });
    var commentLabel = el("label", {}, "Tell us more (optional) ");
    commentLabel.appendChild(comment);
    var contactLabel = el("label", {}, "Your email, if we may reply (optional) ");
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
