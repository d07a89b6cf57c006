// The dialog's styles, adopted into its shadow root as a constructed sheet, which a strict CSP allows
// where a <style> element would need 'unsafe-inline'. Sites theme it through the --concierge-* variables.

export const ISLAND_STYLES = `
:host {
	--_bg: var(--concierge-background, #ffffff);
	--_fg: var(--concierge-color, #1b1f24);
	--_muted: var(--concierge-muted, #57606a);
	--_accent: var(--concierge-accent, #3b5bdb);
	--_accent-fg: var(--concierge-accent-color, #ffffff);
	--_border: var(--concierge-border, #d0d7de);
	--_surface: var(--concierge-surface, #f6f8fa);
	--_radius: var(--concierge-radius, 12px);
	--_font: var(--concierge-font, system-ui, -apple-system, "Segoe UI", "Hiragino Sans", "Noto Sans JP", sans-serif);
}
@media (prefers-color-scheme: dark) {
	:host {
		--_bg: var(--concierge-background, #161b22);
		--_fg: var(--concierge-color, #e6edf3);
		--_muted: var(--concierge-muted, #9da7b3);
		--_accent: var(--concierge-accent, #7c9cff);
		--_accent-fg: var(--concierge-accent-color, #0d1117);
		--_border: var(--concierge-border, #30363d);
		--_surface: var(--concierge-surface, #0d1117);
	}
}
.panel {
	box-sizing: border-box;
	width: min(42rem, calc(100vw - 2rem));
	max-height: min(44rem, calc(100vh - 4rem));
	padding: 0;
	border: 1px solid var(--_border);
	border-radius: var(--_radius);
	background: var(--_bg);
	color: var(--_fg);
	font: 16px/1.6 var(--_font);
	box-shadow: 0 16px 48px rgb(0 0 0 / 0.25);
}
.panel::backdrop { background: rgb(0 0 0 / 0.4); }
.frame { display: flex; flex-direction: column; max-height: inherit; }
.header { display: flex; align-items: center; gap: 0.5rem; padding: 0.75rem 1rem; border-bottom: 1px solid var(--_border); }
.title { flex: 1; margin: 0; font-size: 1.05rem; }
button { font: inherit; color: inherit; cursor: pointer; }
.icon-button, .text-button {
	border: 0;
	background: none;
	border-radius: 6px;
	padding: 0.25rem 0.5rem;
	color: var(--_muted);
}
.icon-button { font-size: 1.5rem; line-height: 1; }
.icon-button:hover, .text-button:hover { background: var(--_surface); color: var(--_fg); }
.body { flex: 1; overflow-y: auto; padding: 0.5rem 1rem 1rem; overscroll-behavior: contain; }
.turn { padding: 0.75rem 0; border-bottom: 1px solid var(--_border); }
.turn:last-child { border-bottom: 0; }
.you { margin: 0 0 0.5rem; font-weight: 600; white-space: pre-wrap; overflow-wrap: anywhere; }
.sources { margin: 0.25rem 0 0.75rem; }
.sources-title { margin: 0 0 0.25rem; font-size: 0.8rem; font-weight: 600; color: var(--_muted); text-transform: uppercase; letter-spacing: 0.03em; }
.source-list, .suggestion-list { margin: 0; padding-left: 1.25rem; font-size: 0.9rem; }
.suggestion-list { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.5rem; }
.suggestion { border: 1px solid var(--_border); background: var(--_surface); border-radius: 999px; padding: 0.25rem 0.75rem; font-size: 0.9rem; }
.suggestion:hover { border-color: var(--_accent); }
a { color: var(--_accent); overflow-wrap: anywhere; }
.answer { overflow-wrap: anywhere; }
.answer p { margin: 0 0 0.6rem; }
.answer pre { overflow-x: auto; padding: 0.75rem; border-radius: 8px; background: var(--_surface); font-size: 0.85rem; }
.answer code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.9em; }
.answer .concierge-cite { font-size: 0.8em; vertical-align: super; text-decoration: none; padding: 0 0.1em; }
.note, .notice { margin: 0.25rem 0; font-size: 0.9rem; color: var(--_muted); }
.notice { padding: 0.4rem 0.6rem; border-left: 3px solid var(--_accent); background: var(--_surface); border-radius: 0 6px 6px 0; }
.progress, .connection { margin: 0; padding: 0.5rem 1rem; font-size: 0.85rem; color: var(--_muted); border-top: 1px solid var(--_border); }
.progress-text { margin: 0 0 0.25rem; }
.progress progress { width: 100%; accent-color: var(--_accent); }
.ask { display: flex; gap: 0.5rem; padding: 0.75rem 1rem; border-top: 1px solid var(--_border); }
.question {
	flex: 1;
	resize: none;
	min-height: 2.5rem;
	max-height: 8rem;
	field-sizing: content;
	padding: 0.5rem 0.75rem;
	border: 1px solid var(--_border);
	border-radius: 8px;
	background: var(--_bg);
	color: var(--_fg);
	font: inherit;
}
.question:focus-visible, button:focus-visible, a:focus-visible { outline: 2px solid var(--_accent); outline-offset: 2px; }
.send, .stop { border: 0; border-radius: 8px; padding: 0 1rem; background: var(--_accent); color: var(--_accent-fg); font-weight: 600; }
.stop { background: var(--_muted); color: var(--_bg); }
[hidden] { display: none !important; }
.visually-hidden {
	position: absolute;
	width: 1px;
	height: 1px;
	margin: -1px;
	overflow: hidden;
	clip-path: inset(50%);
	white-space: nowrap;
}
@media (max-width: 640px) {
	.panel { width: 100vw; max-width: 100vw; height: 100dvh; max-height: 100dvh; margin: 0; border-radius: 0; border: 0; }
	.frame { height: 100%; }
}
@media (prefers-reduced-motion: no-preference) {
	.panel[open] { animation: concierge-in 140ms ease-out; }
	@keyframes concierge-in { from { opacity: 0; transform: translateY(8px); } }
}
`;
