/**
 * The text of `conform spec --openapi | --asyncapi`: the service's OpenAPI 3.1 or AsyncAPI 3.0
 * document (src/api-documents.ts) as JSON, for Schemathesis, Prism, code generators and the like.
 */
import { asyncApiDocument, openApiDocument } from './api-documents.ts';
import { UsageError } from './errors.ts';

/** Which document to print: exactly one of the two. */
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
