/**
 * `conform spec --openapi | --asyncapi`: prints the service's OpenAPI 3.1 (REST) or AsyncAPI 3.0
 * (stream) document; the text is the library's (src/spec-text.ts).
 */
import type { Argv } from 'yargs';
import { EXIT } from '../../src/conform.ts';
import { specText } from '../../src/spec-text.ts';
import type { Command } from './command.ts';

export const specCommand: Command = {
  command: 'spec',
  describe: 'Print the OpenAPI 3.1 (REST) or AsyncAPI 3.0 (stream) document of the service',
  builder: (y: Argv) =>
    y
      .option('openapi', { type: 'boolean', default: false, describe: 'the REST API as OpenAPI 3.1' })
      .option('asyncapi', {
        type: 'boolean',
        default: false,
        describe: 'the stream (WebSocket, Socket.IO) as AsyncAPI 3.0',
      }),
  examples: [
    ['conform spec --openapi > openapi.json', 'the REST API, for Schemathesis, Prism or a code generator'],
    ['conform spec --asyncapi > asyncapi.json', 'the stream, raw WebSocket and Socket.IO'],
  ],
  exitCodes: { [EXIT.ok]: 'the document was printed', [EXIT.usage]: 'not exactly one of --openapi and --asyncapi' },
  async run(argv, ctx) {
    process.stdout.write(specText({ openapi: argv.openapi === true, asyncapi: argv.asyncapi === true }, ctx.version));
    return EXIT.ok;
  },
};
