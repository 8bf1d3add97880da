// koe live's panel. Every control is made from the description the server sends (/api/settings: the settings
// table's live settings with their ranges, units, scale and help), so no range is written here. A control carries
// data-setting="NAME" (the table's name) and its value in that setting's own units; moving it (an input or change
// event) sends NAME=VALUE, a `koe live --set` line, over the WebSocket. The server sends the values whenever they
// change (from here, from `koe live --set` or from the arrow keys) and the levels and F0 20 times a second.
'use strict';

(() => {
  const token = new URLSearchParams(location.search).get('token') || '';
  const withToken = (path) => `${path}?token=${encodeURIComponent(token)}`;
  const chartSeconds = 10;
  const floorDb = -100;
  const chartHz = [50, 1000];          // the F0 chart's axis, log scale
  const sendEvery = 25;                // ms: a slider's moves are sent at most this often

  let description = null;
  let values = {};
  let aiming = { pitch: false, formant: false };   // the ratios a voice preset aims from the speaker
  let applied = null;                  // [pitch, formant]: the ratios heard, from the telemetry
  let socket = null;
  const controls = new Map();          // name -> (value) => void, which shows a value without sending it
  const touched = new Map();           // name -> time the person last moved its control
  const pending = new Map();           // name -> the words waiting to be sent
  let sendTimer = null;
  const records = [];                  // [seconds, input peak, output peak, F0 in, F0 out]

  const element = (tag, attributes = {}, ...children) => {
    const made = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (name === 'class') made.className = value;
      else if (name === 'text') made.textContent = value;
      else made.setAttribute(name, value);
    }
    for (const child of children) made.append(child);
    return made;
  };
  const words = (name) => name.replace(/_/g, ' ');
  const rounded = (value) => Number(Number(value).toPrecision(4));

  function say(text, isError = false) {
    const message = document.getElementById('message');
    message.textContent = text;
    message.className = `message shown${isError ? ' error' : ''}`;
    clearTimeout(say.timer);
    say.timer = setTimeout(() => { message.className = 'message'; }, isError ? 6000 : 2500);
  }

  // A change koe refused: why, and the controls back at the values koe has.
  function refused(message) {
    say(message, true);
    show(values);
  }

  // Sending: the newest value of each setting, at most every `sendEvery` ms.
  function send(name, assignment) {
    touched.set(name, performance.now());
    pending.set(name, assignment);
    if (sendTimer === null) sendTimer = setTimeout(flush, sendEvery);
  }

  function flush() {
    sendTimer = null;
    if (pending.size === 0) return;
    const line = [...pending.values()].join(' ');
    pending.clear();
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(line);
      return;
    }
    fetch(withToken('/api/set'), { method: 'POST', body: line, headers: { 'Content-Type': 'text/plain' } })
      .then((response) => response.json())
      .then((answer) => (answer.type === 'error' ? refused(answer.message) : state(answer)))
      .catch(() => say('koe live is not answering', true));
  }

  // A range slider whose value property reads and writes the setting's units, on a log scale where the table
  // says so, so that scripts set `pitch` to 1.5 as a person drags it there.
  function slider(setting, onMove) {
    const logarithmic = setting.logarithmic;
    const toPosition = (value) => (logarithmic ? Math.log2(value) : value);
    const toValue = (position) => (logarithmic ? 2 ** position : position);
    const input = element('input', {
      type: 'range', 'data-setting': setting.name, min: toPosition(setting.minimum), max: toPosition(setting.maximum),
      step: setting.type === 'integer' ? 1 : 'any', title: setting.help,
    });
    const native = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value');
    Object.defineProperty(input, 'value', {
      configurable: true,
      get() { return String(rounded(toValue(Number(native.get.call(this))))); },
      set(value) { native.set.call(this, String(toPosition(Number(value)))); },
    });
    input.addEventListener('input', () => onMove(input.value));
    input.addEventListener('change', () => onMove(input.value));
    return input;
  }

  function row(setting, ...parts) {
    return element('div', { class: 'control', id: `control-${setting.name}` },
      element('label', { class: 'name', text: words(setting.name), for: `input-${setting.name}` }), ...parts,
      element('p', { class: 'help', text: setting.help }));
  }

  function numberControl(setting, place, optional = false) {
    const box = element('input', { type: 'number', min: setting.minimum, max: setting.maximum, step: 'any', 'aria-label': words(setting.name) });
    const unit = setting.unit && setting.unit !== 'ratio' ? setting.unit : '';
    let enabled = null;
    const input = slider(setting, (value) => {
      box.value = value;
      if (enabled && !enabled.checked) enabled.checked = true;
      send(setting.name, `${setting.name}=${value}`);
    });
    input.id = `input-${setting.name}`;
    box.addEventListener('change', () => {
      if (box.value === '') return;
      input.value = box.value;
      input.dispatchEvent(new Event('change'));
    });
    const parts = [input, element('span', { class: 'pair' }, box, element('span', { class: 'unit', text: unit }))];
    if (optional) {
      enabled = element('input', { type: 'checkbox', title: `${words(setting.name)} on or off` });
      enabled.addEventListener('change', () => send(setting.name, `${setting.name}=${enabled.checked ? input.value : description.off}`));
      parts[1].prepend(enabled);
    }
    const made = row(setting, ...parts);
    place.append(made);
    controls.set(setting.name, (value) => {
      if (optional) {
        enabled.checked = value !== null;
        made.classList.toggle('off', value === null);
        if (value === null) return;
      }
      input.value = value;
      box.value = rounded(value);
    });
  }

  function flagControl(setting, place) {
    const box = element('input', { type: 'checkbox', 'data-setting': setting.name, id: `input-${setting.name}`, title: setting.help });
    const changed = () => send(setting.name, `${setting.name}=${box.checked}`);
    box.addEventListener('change', changed);
    box.addEventListener('input', changed);
    place.append(row(setting, box, element('span')));
    controls.set(setting.name, (value) => { box.checked = Boolean(value); });
  }

  function bypassSwitch(setting) {
    const box = element('input', { type: 'checkbox', 'data-setting': setting.name, id: `input-${setting.name}`, title: setting.help });
    const label = element('label', { class: 'switch', title: setting.help }, box, 'bypass (dry)');
    const changed = () => send(setting.name, `${setting.name}=${box.checked}`);
    box.addEventListener('change', changed);
    box.addEventListener('input', changed);
    document.getElementById('bypass-place').append(label);
    controls.set(setting.name, (value) => { box.checked = Boolean(value); label.classList.toggle('on', Boolean(value)); });
  }

  function snapControl(setting, place) {
    const key = element('select', { 'aria-label': 'key' });
    for (const name of description.snap.keys) key.append(element('option', { value: name, text: name }));
    const mode = element('select', { 'data-setting': setting.name, id: `input-${setting.name}`, title: setting.help });
    for (const name of [description.off, 'chromatic', ...description.snap.modes]) mode.append(element('option', { value: name, text: name }));
    const text = () => (mode.value === description.off || mode.value === 'chromatic' ? mode.value : `${key.value}:${mode.value}`);
    const changed = () => send(setting.name, `${setting.name}=${text()}`);
    for (const select of [key, mode]) {
      select.addEventListener('change', changed);
      select.addEventListener('input', changed);
    }
    place.append(row(setting, element('span', { class: 'pair' }, key, mode), element('span')));
    controls.set(setting.name, (value) => {
      if (value === null || value === 'chromatic') {
        mode.value = value === null ? description.off : 'chromatic';
      } else {
        const [tonic, scale] = value.split(':');
        key.value = tonic;
        mode.value = scale;
      }
      for (const name of ['snap_strength', 'snap_speed', 'a4']) {
        const tuned = document.getElementById(`control-${name}`);
        if (tuned) tuned.classList.toggle('off', value === null);
      }
    });
  }

  function bandsControl(setting, place) {
    const input = element('input', {
      type: 'text', 'data-setting': setting.name, id: `input-${setting.name}`, title: setting.help, spellcheck: 'false',
      placeholder: `${description.eqKinds.join('|')}:Hz[:dB[:Q]] …`,
    });
    const changed = () => {
      const bands = input.value.trim().split(/\s+/).filter(Boolean);
      send(setting.name, bands.length ? bands.map((band) => `${setting.name}=${band}`).join(' ') : `${setting.name}=${description.off}`);
    };
    input.addEventListener('change', changed);
    place.append(row(setting, input, element('span')));
    controls.set(setting.name, (value) => { if (document.activeElement !== input) input.value = value || ''; });
  }

  function graphicControl(setting) {
    const place = document.getElementById('geq');
    const sliders = description.graphicEQ.frequencies.map((frequency, band) => {
      const input = slider({ ...setting, minimum: description.graphicEQ.minimum, maximum: description.graphicEQ.maximum, logarithmic: false, type: 'number' },
        () => send(setting.name, `${setting.name}=${sliders.map((one) => one.value).join(',')}`));
      input.dataset.band = band;
      input.title = `${setting.help} This band: ${frequency} Hz.`;
      const label = frequency >= 1000 ? `${frequency / 1000}k` : `${Math.round(frequency)}`;
      place.append(element('div', { class: 'band' }, input, element('span', { text: label })));
      return input;
    });
    place.title = setting.help;
    controls.set(setting.name, (value) => {
      (value || '').split(',').forEach((gain, band) => { if (sliders[band]) sliders[band].value = Number(gain); });
    });
  }

  function presetButtons(setting) {
    const place = document.getElementById('presets');
    const buttons = description.presets.map((preset) => {
      const button = element('button', { type: 'button', 'data-preset': preset.name, title: preset.summary, text: preset.name });
      button.addEventListener('click', () => send(setting.name, `${setting.name}=${preset.name}`));
      place.append(button);
      return button;
    });
    controls.set(setting.name, (value) => buttons.forEach((button) => button.classList.toggle('active', button.dataset.preset === value)));
  }

  const groups = {
    voice: ['pitch', 'semitones', 'formant', 'pitch_range', 'pitch_median', 'whisper'],
    snap: ['snap', 'snap_strength', 'snap_speed', 'a4', 'vibrato_rate', 'vibrato_depth'],
    output: ['eq', 'gain', 'no_limit'],
  };
  // `vibrato` is vibrato_rate and vibrato_depth in one text: those two sliders are its controls.
  const shownElsewhere = new Set(['vibrato']);

  function build() {
    const byName = new Map(description.settings.map((setting) => [setting.name, setting]));
    for (const [group, names] of Object.entries(groups)) {
      const place = document.getElementById(group);
      for (const name of names) {
        const setting = byName.get(name);
        if (!setting) continue;
        if (name === 'snap') snapControl(setting, place);
        else if (name === 'eq') bandsControl(setting, place);
        else if (setting.type === 'flag') flagControl(setting, place);
        else numberControl(setting, place, setting.default === null);
      }
    }
    for (const setting of description.settings) {
      if (setting.name === 'preset') presetButtons(setting);
      else if (setting.name === 'geq') graphicControl(setting);
      else if (setting.name === 'bypass') bypassSwitch(setting);
      else if (!controls.has(setting.name) && !shownElsewhere.has(setting.name)) {
        // A live setting this page has no place for yet still gets a control.
        if (setting.type === 'flag') flagControl(setting, document.getElementById('output'));
        else if (setting.minimum !== null) numberControl(setting, document.getElementById('output'), setting.default === null);
      }
    }
    drawGrid();
  }

  // The control a person is moving keeps its place until the moves have reached koe; it shows the values
  // once that time is over.
  const settleTime = 400;

  // A ratio a voice preset aims is the speaker's, not the preset's: its control (and for the pitch, the semitones
  // it makes) shows the ratio heard, and says what it aims at.
  const aimedBy = { pitch: 'pitch', semitones: 'pitch', formant: 'formant' };
  const aimed = (name) => Boolean(aiming[aimedBy[name]]) && applied !== null;

  const aimedRatios = [['pitch', 0, 'f0MedianHz', 'Hz'], ['formant', 1, 'vocalTractLengthCm', 'cm']];

  // Says on each aimed ratio's control what it aims at; made anew with each state, not with each telemetry.
  function showAimNotes() {
    for (const [name, , target, unit] of aimedRatios) {
      const row = document.getElementById(`control-${name}`);
      if (!row) continue;
      let note = row.querySelector('.aim');
      if (!note) {
        note = element('p', { class: 'aim' });
        row.append(note);
      }
      const on = Boolean(aiming[name]);
      row.classList.toggle('aimed', on);
      note.textContent = on ? `${values.preset} aims at ${aiming[target]} ${unit} from your voice` : '';
    }
  }

  // The ratios heard, on the controls of the ratios that aim (unless the person is moving one).
  function showApplied() {
    if (applied === null) return;
    for (const [name, index] of aimedRatios) {
      if (!aiming[name] || !controls.has(name) || performance.now() - (touched.get(name) || -Infinity) < settleTime) continue;
      controls.get(name)(applied[index]);
      if (name === 'pitch' && controls.has('semitones')) controls.get('semitones')(12 * Math.log2(applied[index]));
    }
  }

  function show(newValues) {
    values = newValues;
    const now = performance.now();
    let waiting = false;
    for (const [name, showValue] of controls) {
      if (!(name in values) || aimed(name)) continue;
      if (now - (touched.get(name) || -Infinity) < settleTime) {
        waiting = true;
        continue;
      }
      showValue(values[name]);
    }
    clearTimeout(show.later);
    if (waiting) show.later = setTimeout(() => show(values), settleTime);
    showAimNotes();
    showApplied();
  }

  function state(message) {
    aiming = message.aiming;
    show(message.values);
  }

  // Levels and F0.
  const decibels = (peak) => (peak > 0 ? Math.max(floorDb, 20 * Math.log10(peak)) : floorDb);

  function meter(id, peak) {
    const db = decibels(peak);
    const box = document.getElementById(id);
    box.dataset.db = db.toFixed(1);
    box.querySelector('.meter-fill').style.width = `${Math.max(0, Math.min(100, (db + 60) / 60 * 100))}%`;
    box.querySelector('.meter-figure').textContent = db <= floorDb ? '–∞ dB' : `${db.toFixed(0)} dB`;
  }

  const chartY = (hz) => 220 * (1 - Math.log(hz / chartHz[0]) / Math.log(chartHz[1] / chartHz[0]));

  function drawGrid() {
    const grid = document.getElementById('f0-grid');
    for (const hz of [60, 100, 200, 400, 800]) {
      const y = chartY(hz).toFixed(1);
      const line = document.createElementNS('http://www.w3.org/2000/svg', 'line');
      for (const [name, value] of Object.entries({ x1: 0, x2: 600, y1: y, y2: y })) line.setAttribute(name, value);
      const label = document.createElementNS('http://www.w3.org/2000/svg', 'text');
      label.setAttribute('x', 4);
      label.setAttribute('y', Number(y) - 3);
      label.textContent = `${hz} Hz`;
      grid.append(line, label);
    }
  }

  function drawLine(id, column, now) {
    let path = '';
    let drawing = false;
    const voiced = [];
    for (const record of records) {
      const hz = record[column];
      if (!(hz > 0)) { drawing = false; continue; }
      const x = (600 * (1 - (now - record[0]) / chartSeconds)).toFixed(1);
      const y = chartY(Math.min(chartHz[1], Math.max(chartHz[0], hz))).toFixed(1);
      path += `${drawing ? 'L' : 'M'}${x} ${y}`;
      drawing = true;
      voiced.push(`${record[0].toFixed(3)}:${hz.toFixed(1)}`);
    }
    const line = document.getElementById(id);
    line.setAttribute('d', path);
    line.dataset.hz = voiced.join(' ');
  }

  function telemetry(message) {
    records.push(...message.records);
    const now = records.length ? records[records.length - 1][0] : 0;
    while (records.length && records[0][0] < now - chartSeconds) records.shift();
    if (message.records.length) {
      meter('meter-in', Math.max(...message.records.map((record) => record[1])));
      meter('meter-out', Math.max(...message.records.map((record) => record[2])));
      const last = message.records[message.records.length - 1];
      const hz = (value) => (value > 0 ? `${Math.round(value)}` : '–');
      document.getElementById('f0-now').textContent = `${hz(last[3])} → ${hz(last[4])} Hz`;
    }
    applied = message.applied;
    showApplied();
    drawLine('f0-in-line', 3, now);
    drawLine('f0-out-line', 4, now);
    document.getElementById('latency').textContent = `${message.latencyMs.toFixed(1)} ms`;
    document.getElementById('xruns').textContent = `${message.xruns}${message.refusedBlocks ? ` (${message.refusedBlocks} refused)` : ''}`;
    document.getElementById('busiest').textContent = `${message.busiestPercent.toFixed(1)} % (${message.busiestSecond.toFixed(1)} s in)`;
  }

  function connect() {
    const status = document.getElementById('connection');
    socket = new WebSocket(`ws://${location.host}${withToken('/api/live')}`);
    socket.addEventListener('open', () => { status.textContent = 'live'; status.className = 'connection live'; });
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(event.data);
      if (message.type === 'state') state(message);
      else if (message.type === 'telemetry') telemetry(message);
      else if (message.type === 'error') refused(message.message);
    });
    socket.addEventListener('close', () => {
      status.textContent = 'koe live is not answering: trying again…';
      status.className = 'connection lost';
      setTimeout(connect, 1000);
    });
  }

  async function start() {
    const response = await fetch(withToken('/api/settings'));
    if (!response.ok) {
      document.getElementById('connection').textContent = 'open the address koe live printed: this one has no valid token';
      document.getElementById('connection').className = 'connection lost';
      return;
    }
    description = await response.json();
    build();
    connect();
  }

  start().catch((error) => say(`the panel could not start: ${error}`, true));
})();
