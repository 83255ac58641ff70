/**
 * `conform spec --openapi | --asyncapi`: prints the service's OpenAPI 3.1 or AsyncAPI 3.0
 * document (src/api-documents.ts) as JSON, for Schemathesis, Prism, code generators and the like.
 */
import type { Argv, CommandModule } from 'yargs';
import { asyncApiDocument, openApiDocument } from './api-documents.ts';
import { UsageError } from './errors.ts';

export interface SpecOptions {
  openapi: boolean;
  asyncapi: boolean;
}

/** The document the options ask for, as JSON text; exactly one of the two flags. */
export function specText(options: SpecOptions, version: string): string {
  if (options.openapi === options.asyncapi) throw new UsageError('spec: give exactly one of --openapi and --asyncapi');
  const doc = options.openapi ? openApiDocument(version) : asyncApiDocument(version);
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** The command, given the package version that the documents carry as info.version. */
export const specCommand = (version: string): CommandModule<object, SpecOptions> => ({
  command: 'spec',
  describe: 'Print the OpenAPI 3.1 (REST) or AsyncAPI 3.0 (stream) document of the service',
  builder: (y: Argv) =>
    y
      .option('openapi', { type: 'boolean', default: false, describe: 'the REST API as OpenAPI 3.1' })
      .option('asyncapi', {
        type: 'boolean',
        default: false,
        describe: 'the stream (WebSocket, Socket.IO) as AsyncAPI 3.0',
      }) as unknown as Argv<SpecOptions>,
  handler: (argv) => {
    process.stdout.write(specText(argv, version));
  },
});
