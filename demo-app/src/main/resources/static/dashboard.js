/*
 * cosched live scheduler dashboard.
 *
 * Polls GET /actuator/cosched every 500 ms, keeps 120 s of history per scheduler and draws it on
 * <canvas> charts with hand-written code. No frameworks, no external resources, no build step.
 *
 * For tests, window.coschedDashboard holds { samples, maxSeen: { <scheduler>: { queueDepth,
 * coroutines, waiting, ready, activeThreads } } }, document.body.dataset.samples the sample count,
 * and every canvas a data-points attribute: the number of non-zero points it drew last.
 */
(function () {
  'use strict';

  // Relative URLs, so that the page also works under a context path.
  var METRICS_URL = 'actuator/cosched';
  var BURST_URL = 'api/burst';
  var DOWNSTREAM_URL = 'downstream/settings';

  var POLL_MS = 500;
  var ERROR_RETRY_MS = 1000;
  var HISTORY_MS = 120 * 1000;
  var GAP_MS = 2500;          // a longer pause between two samples breaks the lines
  var RATE_WINDOW_MS = 2000;  // completions/second over about this long
  var REQUEST_TIMEOUT_MS = 3000;

  var MAX_FIELDS = ['queueDepth', 'coroutines', 'waiting', 'ready', 'activeThreads'];

  var CHARTS = [
    {
      key: 'queue', title: 'queue depth', fill: true,
      series: [{ field: 'queueDepth', label: 'queue depth', color: '#2563eb' }]
    },
    {
      key: 'threads', title: 'threads',
      series: [
        { field: 'activeThreads', label: 'active', color: '#16a34a' },
        { field: 'idleThreads', label: 'idle', color: '#94a3b8' },
        { field: 'stalledThreads', label: 'stalled', color: '#dc2626' }
      ]
    },
    {
      key: 'coroutines', title: 'coroutines by state',
      series: [
        { field: 'ready', label: 'ready', color: '#2563eb' },
        { field: 'running', label: 'running', color: '#16a34a' },
        { field: 'waiting', label: 'waiting', color: '#f59e0b' },
        { field: 'sleeping', label: 'sleeping', color: '#9333ea' }
      ]
    }
  ];

  var dashboard = window.coschedDashboard = { samples: 0, maxSeen: {}, errors: 0, lastError: null };

  var schedulers = {};   // name -> view: { section, charts, history, ... }
  var lastSampleAt = 0;  // performance.now() of the last sample

  // ------------------------------------------------------------------ small helpers

  function $(id) { return document.getElementById(id); }

  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) { e.className = className; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }

  function num(v) {
    var n = Number(v);
    return isFinite(n) ? n : 0;
  }

  var intFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

  function fmt(v) {
    return v === undefined || v === null || v === '' ? '–' : intFormat.format(num(v));
  }

  /** Short axis labels: 950, 1.2k, 35k, 1.5M. */
  function fmtAxis(v) {
    var a = Math.abs(v);
    if (a >= 1e6) { return trim(v / 1e6) + 'M'; }
    if (a >= 1e4) { return trim(v / 1e3) + 'k'; }
    return trim(v);
  }

  function trim(v) {
    return String(Math.round(v * 10) / 10);
  }

  function fetchWithTimeout(url, options, timeoutMs) {
    options = options || {};
    if (typeof AbortController === 'undefined') { return fetch(url, options); }
    var controller = new AbortController();
    var timer = setTimeout(function () { controller.abort(); }, timeoutMs);
    options.signal = controller.signal;
    return fetch(url, options).finally(function () { clearTimeout(timer); });
  }

  /** The body of a response as JSON, or null when it has none or it is not JSON. */
  function readJson(res) {
    return res.text().then(function (text) {
      if (!text) { return null; }
      try { return JSON.parse(text); } catch (e) { return null; }
    });
  }

  function problemText(res, body) {
    if (body && typeof body === 'object') {
      if (body.detail) { return String(body.detail); }
      if (body.title) { return String(body.title); }
      if (body.error) { return String(body.error); }
    }
    return 'HTTP ' + res.status + (res.statusText ? ' ' + res.statusText : '');
  }

  function describeFailure(e) {
    if (e && e.name === 'AbortError') {
      return 'GET /actuator/cosched did not answer within ' + (REQUEST_TIMEOUT_MS / 1000) + ' s.';
    }
    if (e && e.status) {
      if (e.status === 404) {
        return 'GET /actuator/cosched answered 404: the cosched actuator endpoint is not exposed '
          + '(add "cosched" to management.endpoints.web.exposure.include).';
      }
      if (e.status === 401 || e.status === 403) {
        return 'GET /actuator/cosched answered ' + e.status + ': the actuator endpoint is secured.';
      }
      return 'GET /actuator/cosched answered HTTP ' + e.status + '.';
    }
    if (e instanceof TypeError) {
      return 'cannot reach the application (' + e.message + '). Is it running?';
    }
    return (e && e.message) ? e.message : String(e);
  }

  // ------------------------------------------------------------------ polling the metrics

  function poll() {
    var started = performance.now();
    fetchWithTimeout(METRICS_URL, { headers: { Accept: 'application/json' }, cache: 'no-store' }, REQUEST_TIMEOUT_MS)
      .then(function (res) {
        if (!res.ok) {
          var err = new Error('HTTP ' + res.status);
          err.status = res.status;
          throw err;
        }
        return res.json();
      })
      .then(function (body) {
        if (!body || typeof body.schedulers !== 'object' || body.schedulers === null) {
          throw new Error('unexpected answer from GET /actuator/cosched: no "schedulers" in it.');
        }
        onSample(body, performance.now());
        setError(null);
        schedule(started, POLL_MS);
      })
      .catch(function (e) {
        dashboard.errors++;
        setError(describeFailure(e));
        schedule(started, ERROR_RETRY_MS);
      });
  }

  function schedule(started, period) {
    var wait = Math.max(0, period - (performance.now() - started));
    setTimeout(poll, wait);
  }

  function setError(message) {
    dashboard.lastError = message;
    var banner = $('error-banner');
    var status = $('poll-status');
    if (message) {
      $('error-text').textContent = message;
      banner.hidden = false;
      status.className = 'poll-status error';
      $('poll-text').textContent = 'metrics unavailable';
    } else {
      banner.hidden = true;
      status.className = 'poll-status live';
    }
  }

  function onSample(body, t) {
    dashboard.samples++;
    document.body.dataset.samples = String(dashboard.samples);
    lastSampleAt = t;

    var web = body.web || {};
    ['inFlight', 'timedOut', 'shed', 'cancelled', 'coroutinesStarted', 'inlined'].forEach(function (k) {
      var e = $('web-' + k);
      e.textContent = fmt(web[k]);
      e.classList.toggle('bad', (k === 'timedOut' || k === 'shed') && num(web[k]) > 0);
    });

    var placeholder = $('schedulers-placeholder');
    if (placeholder) { placeholder.remove(); }

    Object.keys(body.schedulers).forEach(function (name) {
      var s = body.schedulers[name] || {};
      var view = schedulers[name] || (schedulers[name] = createSection(name));
      view.history.push({ t: t, s: s });
      while (view.history.length && view.history[0].t < t - HISTORY_MS - GAP_MS) {
        view.history.shift();
      }
      updateMax(name, s);
      updateSection(view, s, t);
    });

    $('poll-text').textContent = 'live · ' + dashboard.samples + ' samples';
    redrawAll();
  }

  function updateMax(name, s) {
    var max = dashboard.maxSeen[name];
    if (!max) {
      max = dashboard.maxSeen[name] = {};
      MAX_FIELDS.forEach(function (f) { max[f] = 0; });
    }
    MAX_FIELDS.forEach(function (f) { max[f] = Math.max(max[f], num(s[f])); });
  }

  // ------------------------------------------------------------------ one section per scheduler

  function createSection(name) {
    var section = el('section', 'card scheduler');
    section.dataset.scheduler = name;

    var head = el('div', 'scheduler-head');
    head.appendChild(el('h2', null, name));
    var badges = {};
    ['type', 'mode', 'transport', 'state'].forEach(function (k) {
      var b = el('span', 'badge');
      b.appendChild(el('span', 'k', k));
      var v = el('span', 'v', '–');
      b.appendChild(v);
      head.appendChild(b);
      badges[k] = { badge: b, value: v };
    });
    section.appendChild(head);

    var bodyGrid = el('div', 'scheduler-body');
    var charts = CHARTS.map(function (def) {
      var box = el('div', 'chart');
      var chartHead = el('div', 'chart-head');
      chartHead.appendChild(el('h3', null, def.title));
      var legend = el('div', 'legend');
      var values = {};
      def.series.forEach(function (series) {
        var item = el('span', 'legend-item');
        var swatch = el('span', 'swatch');
        swatch.style.background = series.color;
        item.appendChild(swatch);
        item.appendChild(el('span', null, series.label));
        var val = el('span', 'val', '–');
        item.appendChild(val);
        legend.appendChild(item);
        values[series.field] = val;
      });
      chartHead.appendChild(legend);
      box.appendChild(chartHead);
      var canvas = el('canvas');
      canvas.dataset.points = '0';
      canvas.dataset.chart = def.key;
      canvas.dataset.scheduler = name;
      canvas.setAttribute('role', 'img');
      canvas.setAttribute('aria-label', name + ': ' + def.title + ' over the last 120 seconds');
      box.appendChild(canvas);
      bodyGrid.appendChild(box);
      return { def: def, canvas: canvas, values: values };
    });

    var numbers = el('div', 'numbers');
    var kv = el('table', 'kv');
    var cells = {};
    var rows = [
      [['threads', 'threads'], ['queueDepth', 'queue depth']],
      [['activeThreads', 'active'], ['coroutines', 'coroutines']],
      [['idleThreads', 'idle'], ['timersPending', 'timers pending']],
      [['stalledThreads', 'stalled'], ['completedTasks', 'completed']],
      [['stalls', 'stalls'], ['rate', 'completions/s']]
    ];
    rows.forEach(function (pairs) {
      var tr = el('tr');
      pairs.forEach(function (pair, i) {
        if (i > 0) { tr.appendChild(el('td', 'gap')); }
        tr.appendChild(el('td', 'k', pair[1]));
        var v = el('td', 'v', '–');
        v.dataset.field = pair[0];
        tr.appendChild(v);
        cells[pair[0]] = v;
      });
      kv.appendChild(tr);
    });
    numbers.appendChild(kv);

    var carriers = el('table', 'carriers');
    var thead = el('thead');
    var htr = el('tr');
    [['#', 'num'], ['thread', ''], ['state', ''], ['queue', 'num'], ['coroutines', 'num']].forEach(function (h) {
      htr.appendChild(el('th', h[1], h[0]));
    });
    thead.appendChild(htr);
    carriers.appendChild(thead);
    var tbody = el('tbody');
    carriers.appendChild(tbody);
    numbers.appendChild(carriers);
    bodyGrid.appendChild(numbers);

    section.appendChild(bodyGrid);
    $('schedulers').appendChild(section);

    return { name: name, section: section, badges: badges, charts: charts, cells: cells, carriers: tbody, history: [] };
  }

  function updateSection(view, s, t) {
    ['type', 'mode', 'transport', 'state'].forEach(function (k) {
      view.badges[k].value.textContent = s[k] === undefined ? '–' : String(s[k]);
    });
    var state = String(s.state || '');
    view.badges.state.badge.className = 'badge ' + (state === 'RUNNING' ? 'state-running'
      : /TERMINAT|FAIL|STOP/.test(state) ? 'state-bad' : 'state-other');

    var c = view.cells;
    ['threads', 'activeThreads', 'idleThreads', 'stalledThreads', 'stalls', 'queueDepth', 'coroutines',
      'timersPending', 'completedTasks'].forEach(function (f) {
      c[f].textContent = fmt(s[f]);
    });
    c.stalledThreads.className = 'v' + (num(s.stalledThreads) > 0 ? ' bad' : '');
    c.stalls.className = 'v' + (num(s.stalls) > 0 ? ' warn' : '');
    c.rate.textContent = completionRate(view.history, t);

    view.charts.forEach(function (chart) {
      chart.def.series.forEach(function (series) {
        chart.values[series.field].textContent = fmt(s[series.field]);
      });
    });

    var tbody = view.carriers;
    var list = Array.isArray(s.carriers) ? s.carriers : [];
    while (tbody.rows.length > list.length) { tbody.deleteRow(-1); }
    list.forEach(function (carrier, i) {
      var tr = tbody.rows[i];
      if (!tr) {
        tr = tbody.insertRow(-1);
        ['num', 'thread', 'state', 'num', 'num'].forEach(function (cls) { tr.appendChild(el('td', cls)); });
      }
      tr.cells[0].textContent = carrier.index === undefined ? String(i) : String(carrier.index);
      tr.cells[1].textContent = carrier.thread || '–';
      tr.cells[1].title = carrier.thread || '';
      var cs = String(carrier.state || '–');
      tr.cells[2].textContent = '';
      tr.cells[2].appendChild(el('span', 'pill s-' + cs.toLowerCase().replace(/[^a-z]/g, ''), cs));
      tr.cells[3].textContent = fmt(carrier.queueDepth);
      tr.cells[4].textContent = fmt(carrier.coroutines);
    });
  }

  /** Completed tasks per second over the last couple of seconds, from the deltas of the counter. */
  function completionRate(history, t) {
    if (history.length < 2) { return '–'; }
    var last = history[history.length - 1];
    var base = null;
    for (var i = history.length - 2; i >= 0; i--) {
      if (last.t - history[i].t > GAP_MS * 2) { break; }
      base = history[i];
      if (t - history[i].t >= RATE_WINDOW_MS) { break; }
    }
    if (!base) { return '–'; }
    var dt = (last.t - base.t) / 1000;
    var dc = num(last.s.completedTasks) - num(base.s.completedTasks);
    if (dt <= 0 || dc < 0) { return '–'; }
    return intFormat.format(Math.round(dc / dt));
  }

  // ------------------------------------------------------------------ drawing

  function redrawAll() {
    Object.keys(schedulers).forEach(function (name) {
      var view = schedulers[name];
      view.charts.forEach(function (chart) {
        drawChart(chart.canvas, chart.def, view.history, lastSampleAt);
      });
    });
  }

  /** A "nice" axis: top and step with 1, 2 or 5 times a power of ten, about four ticks. */
  function niceScale(max) {
    if (!(max > 0)) { return { top: 1, step: 1 }; }
    var raw = max / 4;
    var pow = Math.pow(10, Math.floor(Math.log10(raw)));
    var f = raw / pow;
    var step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * pow;
    step = Math.max(1, step); // counts: whole numbers only
    return { top: Math.max(step, Math.ceil(max / step) * step), step: step };
  }

  function drawChart(canvas, def, history, now) {
    var dpr = window.devicePixelRatio || 1;
    var w = canvas.clientWidth;
    var h = canvas.clientHeight;
    if (w === 0 || h === 0) { return; }
    var pw = Math.round(w * dpr);
    var ph = Math.round(h * dpr);
    if (canvas.width !== pw || canvas.height !== ph) {
      canvas.width = pw;
      canvas.height = ph;
    }
    var ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);

    var pad = { l: 38, r: 8, t: 6, b: 18 };
    var plotW = w - pad.l - pad.r;
    var plotH = h - pad.t - pad.b;
    var from = now - HISTORY_MS;

    var visible = history.filter(function (p) { return p.t >= from; });
    var max = 0;
    visible.forEach(function (p) {
      def.series.forEach(function (series) { max = Math.max(max, num(p.s[series.field])); });
    });
    var scale = niceScale(max);

    function x(t) { return pad.l + plotW * (1 - (now - t) / HISTORY_MS); }
    function y(v) { return pad.t + plotH * (1 - v / scale.top); }

    ctx.font = '10px system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif';
    ctx.lineWidth = 1;

    // horizontal grid and y labels
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (var v = 0; v <= scale.top + 1e-9; v += scale.step) {
      var gy = Math.round(y(v)) + 0.5;
      ctx.strokeStyle = v === 0 ? '#c5ccd6' : '#edf0f4';
      ctx.beginPath();
      ctx.moveTo(pad.l, gy);
      ctx.lineTo(pad.l + plotW, gy);
      ctx.stroke();
      ctx.fillStyle = '#6b7684';
      ctx.fillText(fmtAxis(v), pad.l - 5, gy);
    }

    // vertical grid and x labels: seconds ago
    ctx.textBaseline = 'top';
    for (var ago = 0; ago <= HISTORY_MS / 1000; ago += 30) {
      var gx = Math.round(pad.l + plotW * (1 - ago * 1000 / HISTORY_MS)) + 0.5;
      ctx.strokeStyle = '#edf0f4';
      ctx.beginPath();
      ctx.moveTo(gx, pad.t);
      ctx.lineTo(gx, pad.t + plotH);
      ctx.stroke();
      ctx.fillStyle = '#6b7684';
      ctx.textAlign = ago === 0 ? 'right' : ago === HISTORY_MS / 1000 ? 'left' : 'center';
      ctx.fillText(ago === 0 ? 'now' : '-' + ago + 's', ago === HISTORY_MS / 1000 ? gx - 3 : gx, pad.t + plotH + 4);
    }

    var points = 0;
    if (visible.length === 0) {
      ctx.fillStyle = '#9aa4b1';
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText('waiting for data…', pad.l + plotW / 2, pad.t + plotH / 2);
    } else {
      ctx.save();
      ctx.beginPath();
      ctx.rect(pad.l, pad.t - 1, plotW + 1, plotH + 2);
      ctx.clip();
      def.series.forEach(function (series) {
        if (def.fill) { fillSeries(ctx, visible, series, x, y); }
        ctx.strokeStyle = series.color;
        ctx.lineWidth = 1.6;
        ctx.lineJoin = 'round';
        ctx.lineCap = 'round';
        ctx.beginPath();
        var prev = null;
        visible.forEach(function (p) {
          var value = num(p.s[series.field]);
          if (value !== 0) { points++; }
          var px = x(p.t);
          var py = y(value);
          if (prev === null || p.t - prev.t > GAP_MS) {
            ctx.moveTo(px, py);
            ctx.lineTo(px + 0.01, py); // with round caps, a lone sample still shows as a dot
          } else {
            ctx.lineTo(px, py);
          }
          prev = p;
        });
        ctx.stroke();
      });
      ctx.restore();
    }
    canvas.dataset.points = String(points);
  }

  function fillSeries(ctx, visible, series, x, y) {
    var base = y(0);
    var segment = [];
    function flush() {
      if (segment.length > 1) {
        ctx.beginPath();
        ctx.moveTo(segment[0][0], base);
        segment.forEach(function (pt) { ctx.lineTo(pt[0], pt[1]); });
        ctx.lineTo(segment[segment.length - 1][0], base);
        ctx.closePath();
        ctx.globalAlpha = 0.14;
        ctx.fillStyle = series.color;
        ctx.fill();
        ctx.globalAlpha = 1;
      }
      segment = [];
    }
    var prev = null;
    visible.forEach(function (p) {
      if (prev !== null && p.t - prev.t > GAP_MS) { flush(); }
      segment.push([x(p.t), y(num(p.s[series.field]))]);
      prev = p;
    });
    flush();
  }

  var resizeTimer = null;
  window.addEventListener('resize', function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(redrawAll, 100);
  });

  // ------------------------------------------------------------------ load burst

  var burstPolling = false;
  var burstStartedAt = 0;
  var burstTook = 0;

  function showBurst(b, note) {
    var status = $('burst-status');
    var detail = $('burst-detail');
    if (!b) {
      status.dataset.state = 'none';
      status.textContent = 'no burst yet';
      detail.textContent = '';
      setBar(0, 0, 1);
      return;
    }
    var requests = num(b.requests);
    var done = num(b.done);
    var ok = num(b.ok);
    var failed = num(b.failed);
    status.dataset.state = b.running ? 'running' : 'done';
    status.dataset.ok = String(ok);
    status.dataset.failed = String(failed);
    status.dataset.done = String(done);
    status.textContent = (b.running ? 'running: ' : 'done: ') + fmt(done) + ' / ' + fmt(requests)
      + ' (ok ' + fmt(ok) + ', failed ' + fmt(failed) + ')';
    var text = fmt(requests) + ' × GET ' + (b.path || '?') + ', ' + fmt(b.concurrency) + ' at a time';
    if (burstStartedAt) {
      // as seen from this page: from the POST until the first status that says it is over
      if (!b.running && !burstTook) { burstTook = performance.now() - burstStartedAt; }
      var secs = (b.running ? performance.now() - burstStartedAt : burstTook) / 1000;
      text += (b.running ? ' · ' : ' · took about ') + secs.toFixed(1) + ' s';
      if (secs > 0.2) { text += ' · ' + fmt(done / secs) + ' req/s'; }
    }
    if (note) { text = note + ' · ' + text; }
    detail.textContent = text;
    setBar(ok, failed, requests);
    $('burst').disabled = !!b.running;
  }

  function setBar(ok, failed, total) {
    var t = Math.max(1, total);
    $('burst-bar-ok').style.width = (100 * ok / t) + '%';
    $('burst-bar-failed').style.width = (100 * failed / t) + '%';
  }

  function burstError(message) {
    var status = $('burst-status');
    status.dataset.state = 'error';
    status.textContent = message;
    $('burst-detail').textContent = '';
    $('burst').disabled = false;
  }

  function startBurst(ev) {
    ev.preventDefault();
    var url = BURST_URL
      + '?requests=' + encodeURIComponent($('burst-requests').value.trim())
      + '&concurrency=' + encodeURIComponent($('burst-concurrency').value.trim())
      + '&path=' + encodeURIComponent($('burst-path').value.trim());
    $('burst').disabled = true;
    fetchWithTimeout(url, { method: 'POST', headers: { Accept: 'application/json' } }, 10000)
      .then(function (res) {
        return readJson(res).then(function (body) {
          if (res.status === 202) {
            burstStartedAt = performance.now();
            burstTook = 0;
            showBurst(body);
            pollBurst();
          } else if (res.status === 409) {
            burstStartedAt = 0; // someone else's burst: its start is unknown here
            showBurst(body, 'a burst is already running');
            pollBurst();
          } else {
            burstError('not started: ' + problemText(res, body));
          }
        });
      })
      .catch(function (e) {
        burstError('not started: ' + ((e && e.message) || e));
      });
  }

  function pollBurst() {
    if (burstPolling) { return; }
    burstPolling = true;
    (function step() {
      fetchWithTimeout(BURST_URL, { headers: { Accept: 'application/json' }, cache: 'no-store' }, REQUEST_TIMEOUT_MS)
        .then(function (res) {
          if (res.status === 204) { return null; }
          if (!res.ok) { throw new Error('GET /api/burst answered HTTP ' + res.status); }
          return res.json();
        })
        .then(function (b) {
          showBurst(b);
          if (b && b.running) {
            setTimeout(step, POLL_MS);
          } else {
            burstPolling = false;
            $('burst').disabled = false;
          }
        })
        .catch(function () {
          setTimeout(step, ERROR_RETRY_MS); // keep trying while the burst may still run
        });
    })();
  }

  function loadBurst() {
    fetchWithTimeout(BURST_URL, { headers: { Accept: 'application/json' }, cache: 'no-store' }, REQUEST_TIMEOUT_MS)
      .then(function (res) {
        if (res.status === 204) { return null; }
        return res.ok ? res.json() : null;
      })
      .then(function (b) {
        if (burstPolling || burstStartedAt) { return; }
        showBurst(b);
        if (b && b.running) { pollBurst(); }
      })
      .catch(function () { /* the metrics banner tells when the app is unreachable */ });
  }

  // ------------------------------------------------------------------ pricing stub settings

  function showSettings(s, prefix) {
    var status = $('ds-status');
    status.className = prefix ? 'ok' : 'muted';
    status.textContent = (prefix ? prefix + ' ' : 'current: ') + 'delay ' + fmt(s.delayMs) + ' ms · failure rate '
      + (Math.round(num(s.failureRate) * 1000) / 10) + ' % · fail next ' + fmt(s.failNext);
  }

  function fillSettings(s) {
    $('ds-delayMs').value = String(num(s.delayMs));
    $('ds-failureRate').value = String(num(s.failureRate));
    $('ds-failNext').value = String(num(s.failNext));
  }

  var settingsNoteUntil = 0;

  function loadSettings(fill) {
    fetchWithTimeout(DOWNSTREAM_URL, { headers: { Accept: 'application/json' }, cache: 'no-store' }, REQUEST_TIMEOUT_MS)
      .then(function (res) {
        if (!res.ok) { throw new Error('HTTP ' + res.status); }
        return res.json();
      })
      .then(function (s) {
        if (fill) { fillSettings(s); }
        if (performance.now() >= settingsNoteUntil) { showSettings(s); }
      })
      .catch(function (e) {
        if (fill) {
          var status = $('ds-status');
          status.className = 'error';
          status.textContent = 'cannot read GET /downstream/settings: ' + ((e && e.message) || e);
        }
      });
  }

  function applySettings(ev) {
    if (ev) { ev.preventDefault(); }
    var status = $('ds-status');
    var settings = {
      delayMs: Number($('ds-delayMs').value),
      failureRate: Number($('ds-failureRate').value),
      failNext: Number($('ds-failNext').value)
    };
    var bad = Object.keys(settings).filter(function (k) {
      return $('ds-' + k).value.trim() === '' || !isFinite(settings[k]);
    });
    if (bad.length) {
      status.className = 'error';
      status.textContent = 'not a number: ' + bad.join(', ');
      return;
    }
    $('ds-apply').disabled = true;
    fetchWithTimeout(DOWNSTREAM_URL, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(settings)
    }, REQUEST_TIMEOUT_MS)
      .then(function (res) {
        return readJson(res).then(function (body) {
          if (!res.ok) { throw new Error(problemText(res, body)); }
          settingsNoteUntil = performance.now() + 3000;
          showSettings(body || settings, 'applied:');
        });
      })
      .catch(function (e) {
        settingsNoteUntil = performance.now() + 5000;
        status.className = 'error';
        status.textContent = 'not applied: ' + ((e && e.message) || e);
      })
      .finally(function () { $('ds-apply').disabled = false; });
  }

  function usePreset(ev) {
    var b = ev.currentTarget;
    $('ds-delayMs').value = b.dataset.delay;
    $('ds-failureRate').value = b.dataset.rate;
    $('ds-failNext').value = b.dataset.next;
    applySettings(null);
  }

  // ------------------------------------------------------------------ start

  function start() {
    $('burst-form').addEventListener('submit', startBurst);
    $('downstream-form').addEventListener('submit', applySettings);
    Array.prototype.forEach.call(document.querySelectorAll('button.preset'), function (b) {
      b.addEventListener('click', usePreset);
    });
    loadBurst();
    loadSettings(true);
    setInterval(function () { loadSettings(false); }, 2000); // failNext counts down as calls fail
    poll();
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
