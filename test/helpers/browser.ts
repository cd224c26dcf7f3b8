// A real browser for the HTML pages: Debian's headless Chromium (chromium-headless-shell, which
// .ci/run installs; never a downloaded browser) driven by playwright-core. One browser per test file,
// a fresh profile dir (removed at stop), flags for running as root in a container, and every page
// opened from disk with the network off: each request that is not the file itself is aborted and
// recorded, so a check can assert that none was attempted.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TestContext } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { requireTool, toolPath } from './tools.ts';

export const CHROMIUM = 'chromium-headless-shell';
/** The window the pages are laid out for. */
export const PAGE_WIDTH = 1280;
/** A4 at 96 px per inch, less Chromium's default 1 cm margins: what a printed page holds. */
export const PRINT_WIDTH = 718;

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--hide-scrollbars'];

export interface PageCheck {
  consoleErrors: string[];
  /** URLs the page tried to load besides its own file (all aborted). */
  requests: string[];
  /** The document's width in px, at PAGE_WIDTH (or PRINT_WIDTH under print). */
  scrollWidth: number;
  /** Elements whose own text is wider than their box ("tag.class: text…"), SVG text outside its picture. */
  cut: string[];
  /** data-pod of every row, by the data-run of its section ("run", "before", "after"). */
  pods: Record<string, string[]>;
}

/** Why the browser cannot run here (the tests skip with it), or undefined; under CI=true a missing browser throws. */
export function browserMissing(): string | undefined {
  if (toolPath(CHROMIUM)) return undefined;
  const message = `${CHROMIUM} not found: install it with "apt-get install chromium-headless-shell" (.ci/run does this)`;
  if (process.env.CI === 'true') throw new Error(message);
  return message;
}

export class PageBrowser {
  private readonly context: BrowserContext;
  private readonly profile: string;

  private constructor(context: BrowserContext, profile: string) {
    this.context = context;
    this.profile = profile;
  }

  /** The browser, or undefined after skipping the test (locally; under CI=true a missing browser fails it). */
  static async start(t: TestContext): Promise<PageBrowser | undefined> {
    if (!requireTool(t, CHROMIUM, 'chromium-headless-shell')) return undefined;
    return PageBrowser.launch();
  }

  static async launch(): Promise<PageBrowser> {
    const executablePath = toolPath(CHROMIUM);
    if (!executablePath) throw new Error(`${CHROMIUM} not found: apt-get install chromium-headless-shell`);
    const profile = await mkdtemp(path.join(tmpdir(), 'nta-browser-'));
    try {
      const context = await chromium.launchPersistentContext(profile, {
        executablePath, headless: true, args: FLAGS, viewport: { width: PAGE_WIDTH, height: 900 }, offline: true,
      });
      return new PageBrowser(context, profile);
    } catch (err) {
      await rm(profile, { recursive: true, force: true });
      throw err;
    }
  }

  /** Opens `file` with the network off and runs the checks, on screen or as printed. */
  async check(file: string, media: 'screen' | 'print' = 'screen'): Promise<PageCheck> {
    return this.withPage(file, media, async (page, check) => ({ ...check, ...(await page.evaluate(measure)) }));
  }

  /** A PNG of the page at PAGE_WIDTH: the whole page, its top `height` px, or one element (`selector`). */
  async screenshot(file: string, out: string, part: { height?: number; selector?: string } = {}): Promise<PageCheck> {
    return this.withPage(file, 'screen', async (page, check) => {
      if (part.selector) await page.locator(part.selector).screenshot({ path: out });
      else {
        const height = await page.evaluate(() => (globalThis as any).document.documentElement.scrollHeight as number);
        await page.screenshot({ path: out, fullPage: true, ...(part.height ? { clip: { x: 0, y: 0, width: PAGE_WIDTH, height: Math.min(height, part.height) } } : {}) });
      }
      return { ...check, ...(await page.evaluate(measure)) };
    });
  }

  /** The page printed to PDF (A4): its bytes. */
  async pdf(file: string): Promise<Buffer> {
    return this.withPage(file, 'print', async (page) => page.pdf({ format: 'A4', printBackground: true }));
  }

  private async withPage<T>(file: string, media: 'screen' | 'print', use: (page: Page, check: Pick<PageCheck, 'consoleErrors' | 'requests'>) => Promise<T>): Promise<T> {
    const page = await this.context.newPage();
    const url = pathToFileURL(path.resolve(file)).href;
    const check = { consoleErrors: [] as string[], requests: [] as string[] };
    page.on('console', (m) => { if (m.type() === 'error') check.consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => check.consoleErrors.push(e.message));
    await page.route('**/*', (route) => {
      if (route.request().url() === url) return route.continue();
      check.requests.push(route.request().url());
      return route.abort();
    });
    try {
      if (media === 'print') {
        await page.emulateMedia({ media: 'print' });
        await page.setViewportSize({ width: PRINT_WIDTH, height: 1000 });
      }
      await page.goto(url, { waitUntil: 'load' });
      return await use(page, check);
    } finally {
      await page.close();
    }
  }

  async stop(): Promise<void> {
    await this.context.close().catch(() => undefined);
    await rm(this.profile, { recursive: true, force: true });
  }
}

/**
 * Runs in the page (serialized by playwright; the project has no DOM types, so the page's globals are
 * taken as `any`): width, text wider than its box, SVG text outside its picture, the pod rows.
 */
function measure(): Omit<PageCheck, 'consoleErrors' | 'requests'> {
  const { document, HTMLElement, Node } = globalThis as any;
  const cut: string[] = [];
  const name = (el: any) => `${el.tagName.toLowerCase()}${typeof el.className === 'string' && el.className ? `.${el.className.split(' ')[0]}` : ''}: ${(el.textContent ?? '').trim().slice(0, 60)}`;
  for (const el of Array.from(document.body.querySelectorAll('*')) as any[]) {
    if (!(el instanceof HTMLElement) || el.clientWidth === 0) continue;
    const ownText = (Array.from(el.childNodes) as any[]).some((n) => n.nodeType === Node.TEXT_NODE && (n.textContent ?? '').trim() !== '');
    if (ownText && el.scrollWidth > el.clientWidth + 1) cut.push(name(el));
  }
  for (const text of Array.from(document.querySelectorAll('svg text')) as any[]) {
    const box = text.getBoundingClientRect();
    const frame = text.ownerSVGElement.getBoundingClientRect();
    if (box.left < frame.left - 1 || box.right > frame.right + 1 || box.top < frame.top - 1 || box.bottom > frame.bottom + 1) cut.push(`svg ${name(text)}`);
  }
  const pods: Record<string, string[]> = {};
  for (const row of Array.from(document.querySelectorAll('[data-pod]')) as any[]) {
    const run = row.closest('[data-run]')?.getAttribute('data-run') ?? '';
    (pods[run] ??= []).push(row.getAttribute('data-pod'));
  }
  return { scrollWidth: document.documentElement.scrollWidth, cut, pods };
}
