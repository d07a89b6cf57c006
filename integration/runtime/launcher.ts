// Runs on every page, so it stays small: the button, the shortcut and the opt-out checks. The dialog, the search
// worker and the answer connection load on first open (or when idle with `prefetch`).

import { ISLAND_TAG, LAUNCHER_OFF_ATTRIBUTE, type IslandConfig } from './island-config.ts';
import type { Island } from './island.ts';
import { pickLanguage, UI_TEXT } from './ui-text.ts';

const LAUNCHER_STYLES = `
:host { display: inline-block; }
:host([data-placement="floating"]) { position: fixed; right: max(1rem, env(safe-area-inset-right)); bottom: max(1rem, env(safe-area-inset-bottom)); z-index: 2147483000; }
button {
	display: inline-flex; align-items: center; gap: 0.5rem;
	padding: 0.6rem 1rem; border: 0; border-radius: 999px; cursor: pointer;
	background: var(--concierge-accent, #3b5bdb); color: var(--concierge-accent-color, #fff);
	font: 600 15px/1.2 var(--concierge-font, system-ui, sans-serif);
	box-shadow: 0 4px 16px rgb(0 0 0 / 0.2);
}
button:focus-visible { outline: 3px solid var(--concierge-color, #1b1f24); outline-offset: 2px; }
svg { width: 1.2em; height: 1.2em; flex: none; }
@media (max-width: 480px) { :host([data-placement="floating"]) .label { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); } }
`;

let started = false;

/** Defines `<astro-concierge>`, places the floating launcher unless the page opted out, and listens for the shortcut. */
export function startConcierge(config: IslandConfig): void {
	// The injected script and <Concierge /> may both start it; one launcher and one dialog per page.
	if (started || typeof customElements === 'undefined') return;
	started = true;
	let island: Promise<Island> | undefined;
	const loadIsland = (): Promise<Island> => (island ??= import('./island.ts').then(({ createIsland }) => createIsland(config)));
	const open = (from?: HTMLElement): void => void loadIsland().then((loaded) => loaded.open(from));
	const apple = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

	class ConciergeLauncher extends HTMLElement {
		button: HTMLButtonElement | undefined;

		connectedCallback(): void {
			if (this.button) return;
			const root = this.attachShadow({ mode: 'open' });
			const sheet = new CSSStyleSheet();
			sheet.replaceSync(LAUNCHER_STYLES);
			root.adoptedStyleSheets = [sheet];
			const button = document.createElement('button');
			button.type = 'button';
			button.setAttribute('aria-haspopup', 'dialog');
			if (config.shortcut) button.setAttribute('aria-keyshortcuts', `${apple ? 'Meta' : 'Control'}+${config.shortcut.toUpperCase()}`);
			const label = document.createElement('span');
			label.className = 'label';
			label.textContent = UI_TEXT[pickLanguage(document.documentElement.lang, config.lang)].launcher;
			button.append(chatIcon(), label);
			button.addEventListener('click', () => open(button));
			root.append(button);
			this.button = button;
		}
	}
	customElements.define(ISLAND_TAG, ConciergeLauncher);

	const floating = document.createElement(ISLAND_TAG) as ConciergeLauncher;
	floating.dataset.placement = 'floating';
	const place = (): void => {
		const optedOut = document.querySelector(`[${LAUNCHER_OFF_ATTRIBUTE}="off"]`) !== null;
		const placed = [...document.querySelectorAll(ISLAND_TAG)].some((element) => element !== floating);
		if (optedOut || placed) floating.remove();
		else if (!floating.isConnected) document.body.append(floating);
	};
	place();
	// View transitions swap <body>; the module does not run again, so the launcher follows the swap itself.
	document.addEventListener('astro:after-swap', place);

	if (config.shortcut) {
		const key = config.shortcut.toLowerCase();
		addEventListener('keydown', (event) => {
			if (event.key.toLowerCase() !== key || event.altKey || event.shiftKey || !(apple ? event.metaKey : event.ctrlKey)) return;
			event.preventDefault();
			const launcher = [...document.querySelectorAll<ConciergeLauncher>(ISLAND_TAG)].find((element) => element.button);
			open(launcher?.button);
		});
	}

	if (config.prefetch) {
		const connection = (navigator as Navigator & { connection?: { saveData?: boolean } }).connection;
		if (!connection?.saveData) {
			const idle = (callback: () => void): void => void (typeof requestIdleCallback === 'function' ? requestIdleCallback(callback) : setTimeout(callback, 2000));
			idle(() => void loadIsland().then((loaded) => loaded.prefetch()));
		}
	}
}

function chatIcon(): SVGSVGElement {
	const ns = 'http://www.w3.org/2000/svg';
	const svg = document.createElementNS(ns, 'svg');
	svg.setAttribute('viewBox', '0 0 24 24');
	svg.setAttribute('aria-hidden', 'true');
	const path = document.createElementNS(ns, 'path');
	path.setAttribute('fill', 'currentColor');
	path.setAttribute('d', 'M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2zm3 6a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3zm5 0a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3zm5 0a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3z');
	svg.append(path);
	return svg;
}
