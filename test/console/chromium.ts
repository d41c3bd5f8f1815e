// What the console's browser tests share: Chromium (Debian's, driven by playwright-core) beside a
// fresh server and a webhook receiver, started before a suite's tests and stopped after them; the
// suite is skipped, saying why, on a machine without Chromium.
import { after, before } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { chromiumPath } from '../clients/tools.ts';
import { Receiver } from '../helpers/receiver.ts';
import { unavailable } from '../helpers/skips.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const executablePath = chromiumPath();

/** The `skip` option of a suite that needs Chromium. */
export const skip = unavailable(!executablePath && 'Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it): the console browser test is skipped');

export interface ChromiumWorld {
  server: TestServer;
  receiver: Receiver;
  browser: Browser;
}

/** Registers the suite's before and after hooks; the members are there once its first test runs. */
export function inChromium(): ChromiumWorld {
  const world = {} as ChromiumWorld;
  before(async () => {
    world.server = await startServer();
    world.receiver = await new Receiver().start();
    world.browser = await chromium.launch({ executablePath: executablePath!, args: ['--no-sandbox'] });
  });
  after(async () => {
    await world.browser?.close();
    await world.receiver?.stop();
    await world.server?.close();
  });
  return world;
}
