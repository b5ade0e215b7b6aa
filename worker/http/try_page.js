/* goboxd's page to try live sessions: GET /sessions over a WebSocket. */
'use strict';
(function () {
	const $ = (id) => document.getElementById(id);
	const colour = { err: '\x1b[31m', note: '\x1b[36m' };
	let ws = null;
	let line = '';
	let term = null;
	/* With xterm.js the program gets a terminal of this size (the
	 * session's tty): keys go to it as typed, and it echoes and edits. */
	const size = { rows: 20, cols: 80 };
	let tty = false;

	function notice(text) {
		$('notice').textContent = text;
		$('notice').hidden = !text;
	}

	/* xterm.js, when the script served at /try/xterm.js defined it */
	function xtermClass() {
		const t = window.Terminal;

		if (typeof t === 'function')
			return t;
		if (t && typeof t.Terminal === 'function')
			return t.Terminal;
		return null;
	}

	function xtermTerminal(T, el, onData) {
		const x = new T({ convertEol: true, rendererType: 'dom', rows: size.rows,
				  cols: size.cols });

		x.open(el);
		if (typeof x.onData === 'function')
			x.onData(onData);
		else
			x.on('data', onData);
		return {
			write: (text, cls) => x.write(cls ? colour[cls] + text + '\x1b[0m' : text),
			typed: (ch) => x.write(ch),
			erase: () => x.write('\b \b'),
			newline: () => x.write('\r\n'),
			reset: () => x.reset(),
			focus: () => x.focus(),
		};
	}

	/* Without xterm.js: output in a <pre>, the line typed in an <input>. */
	function plainTerminal(el, onData) {
		const pre = document.createElement('pre');
		const input = document.createElement('input');
		let pending = '';

		pre.id = 'plain';
		input.id = 'plain-line';
		input.autocomplete = 'off';
		input.placeholder = 'stdin: a line, then Enter';
		el.append(pre, input);
		input.addEventListener('keydown', (e) => {
			let end = null;

			if (e.key === 'Enter')
				end = '\r';
			else if (e.ctrlKey && (e.key === 'd' || e.key === 'c'))
				end = e.key === 'd' ? '\x04' : '\x03';
			if (end === null)
				return;
			e.preventDefault();
			onData(input.value + end);
			input.value = '';
		});
		function write(text, cls) {
			const span = document.createElement('span');

			span.textContent = text;
			if (cls)
				span.className = cls === 'err' ? 'stderr' : cls;
			pre.append(span);
			pre.scrollTop = pre.scrollHeight;
		}
		return {
			write: write,
			typed: (ch) => { pending += ch; },
			erase: () => { pending = Array.from(pending).slice(0, -1).join(''); },
			newline: () => { write(pending + '\n'); pending = ''; },
			reset: () => { pre.textContent = ''; pending = ''; },
			focus: () => input.focus(),
		};
	}

	function send(msg) {
		if (ws && ws.readyState === WebSocket.OPEN)
			ws.send(JSON.stringify(msg));
	}

	function note(text, cls) {
		term.write(text + '\n', cls || 'note');
	}

	/* With a terminal, what is typed goes as it is; without (the plain
	 * stand-in), the page edits a line and sends it on Enter. */
	function onData(data) {
		if (tty) {
			send({ type: 'stdin', data: data });
			return;
		}
		if (data.startsWith('\x1b'))
			return; /* arrows and other escape sequences: no line editing */
		for (const ch of data) {
			if (ch === '\r' || ch === '\n') {
				term.newline();
				send({ type: 'stdin', data: line + '\n' });
				line = '';
			} else if (ch === '\x7f' || ch === '\b') {
				if (line) {
					line = Array.from(line).slice(0, -1).join('');
					term.erase();
				}
			} else if (ch === '\x04') {
				if (line)
					send({ type: 'stdin', data: line });
				line = '';
				send({ type: 'close_stdin' });
				note('[end of input]');
			} else if (ch === '\x03') {
				line = '';
				send({ type: 'signal', name: 'SIGINT' });
				note('^C');
			} else if (ch >= ' ') {
				line += ch;
				term.typed(ch);
			}
		}
	}

	function exitLine(m) {
		let s = '[exit: ' + m.status;

		if (m.exit_code !== null && m.exit_code !== undefined)
			s += ', exit code ' + m.exit_code;
		if (m.signal !== null && m.signal !== undefined)
			s += ', signal ' + m.signal;
		return s + ', ' + m.time_ms + ' ms, ' + m.memory_kb + ' KiB]';
	}

	function onMessage(m) {
		switch (m.type) {
		case 'stage':
			$('state').textContent = m.stage;
			note('[' + m.stage + ']');
			break;
		case 'stdout':
			term.write(m.data);
			break;
		case 'stderr':
			term.write(m.data, 'err');
			break;
		case 'exit':
			$('state').textContent = 'exited: ' + m.status;
			note(exitLine(m));
			break;
		case 'error':
			note('[error ' + m.code + ': ' + m.message + ']', 'err');
			break;
		}
	}

	function running(on) {
		$('stop').disabled = !on;
		$('eof').disabled = !on;
	}

	function token() {
		return $('token').value.trim();
	}

	function run(ev) {
		const tok = token();
		let url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host +
			  '/sessions';
		let sock;

		ev.preventDefault();
		if (ws)
			ws.close();
		if (tok)
			url += '?token=' + encodeURIComponent(tok);
		term.reset();
		line = '';
		sock = new WebSocket(url);
		ws = sock;
		running(true);
		$('state').textContent = 'connecting';
		sock.onopen = () => {
			const msg = { type: 'start', language: $('language').value,
				      source: $('source').value };

			if (tty)
				msg.tty = size;
			sock.send(JSON.stringify(msg));
			$('state').textContent = 'started';
			term.focus();
		};
		sock.onmessage = (e) => {
			if (sock === ws)
				onMessage(JSON.parse(e.data));
		};
		sock.onclose = (e) => {
			if (sock !== ws)
				return;
			ws = null;
			running(false);
			note('[closed' + (e.code !== 1000 ? ': ' + e.code : '') +
			     (e.reason ? ' ' + e.reason : '') + ']');
			if (!$('state').textContent.startsWith('exited'))
				$('state').textContent = 'closed';
		};
	}

	function loadLanguages() {
		const tok = token();

		fetch('/info', { headers: tok ? { Authorization: 'Bearer ' + tok } : {} })
			.then((r) => {
				if (r.status === 401)
					throw new Error('This goboxd needs a token: enter one.');
				if (!r.ok)
					throw new Error('GET /info: ' + r.status);
				return r.json();
			})
			.then((info) => {
				const sel = $('language');
				const was = sel.value || 'py3';

				sel.textContent = '';
				for (const l of info.languages) {
					const o = document.createElement('option');

					o.value = l.id;
					o.textContent = l.id + ': ' + l.name + (l.version ? ' ' + l.version : '');
					sel.append(o);
				}
				if (info.languages.some((l) => l.id === was))
					sel.value = was;
				if (!xtermClass())
					notice('xterm.js did not load from /try/xterm.js (goboxd reads it from ' +
					       'its --try-page-xterm-dir, /opt/goboxd/xterm by default, where ' +
					       './setup.sh install puts it); a plain terminal stands in.');
				else
					notice('');
			})
			.catch((e) => notice(e.message));
	}

	function start() {
		const T = xtermClass();

		tty = !!T;
		term = T ? xtermTerminal(T, $('terminal'), onData) : plainTerminal($('terminal'), onData);
		$('terminal').addEventListener('click', () => term.focus());
		$('form').addEventListener('submit', run);
		$('stop').addEventListener('click', () => { if (ws) ws.close(1000); });
		$('eof').addEventListener('click', () => { onData('\x04'); term.focus(); });
		$('token').addEventListener('change', loadLanguages);
		loadLanguages();
	}

	start();
})();
