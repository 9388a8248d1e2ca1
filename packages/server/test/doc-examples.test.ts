// Every TypeScript block of the SDK's docs (packages/sdk/README.md, docs/integrations.md) compiles
// as a user would compile it: strict, ESM, against the built packages (no source condition), each
// block its own module. Names a block uses without defining (the trace id it has, the keys it
// pinned, the tracer of its app) are declared with the type they have in a real program.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const REPO = path.join(import.meta.dirname, '..', '..', '..');
const DOCS = ['packages/sdk/README.md', 'docs/integrations.md'];
/** What a block may use without defining it, and how a real program would have it. */
const GIVEN: Record<string, string> = {
  trace_id: 'declare const trace_id: string;',
  traceId: 'declare const traceId: string;',
  query: 'declare const query: string;',
  decision_id: 'declare const decision_id: string;',
  publicKeys: "declare const publicKeys: string; // the text of GET /api/v1/integrity/keys, pinned",
  ledger: "import type { AuditLedgerClient } from '@audit-ledger/sdk';\ndeclare const ledger: AuditLedgerClient;",
  verifyReceipt: "import { verifyReceipt } from '@audit-ledger/sdk';",
  tracer: "import type { Tracer } from '@opentelemetry/api';\ndeclare const tracer: Tracer;",
  ctx: "import type { Context } from '@opentelemetry/api';\ndeclare const ctx: Context;",
  asOf: 'declare const asOf: Date;',
  createClient: "import { createClient } from '@audit-ledger/sdk';",
  agentSigner: "import { agentSigner } from '@audit-ledger/sdk';",
  agentKeyRegistration: "import { agentKeyRegistration } from '@audit-ledger/sdk';",
  companyId: 'declare const companyId: string; // company_id of GET /api/v1/auth/me',
  baseUrl: 'declare const baseUrl: string;',
  apiKey: 'declare const apiKey: string;',
  agentPrivateKeyPem: "declare const agentPrivateKeyPem: string; // the agent's own key, PKCS#8 PEM",
  logId: 'declare const logId: string;',
};

function blocks(): Array<{ where: string; code: string }> {
  return DOCS.flatMap((doc) => {
    const text = fs.readFileSync(path.join(REPO, doc), 'utf8');
    return [...text.matchAll(/```ts\n([\s\S]*?)\n```/g)].map((m) => ({ where: `${doc}:${text.slice(0, m.index).split('\n').length}`, code: m[1] as string }));
  });
}

const defines = (code: string, name: string) => new RegExp(`(?:const|let|function)\\s+${name}\\b|import[^;]*\\b${name}\\b[^;]*from`).test(code);

describe('the SDK docs’ TypeScript', () => {
  it('every ts block of the SDK README and docs/integrations.md type-checks, strict, against the built packages', () => {
    const found = blocks();
    expect(found.length).toBeGreaterThanOrEqual(5);
    // Inside the server package, so its dependencies (the OpenTelemetry SDK of the OTLP examples) resolve too.
    const dir = path.join(REPO, 'packages', 'server', 'node_modules', '.cache', 'audit-ledger', 'doc-examples');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const files = found.map((b, i) => {
      const preamble = Object.entries(GIVEN)
        .filter(([name]) => new RegExp(`\\b${name}\\b`).test(b.code) && !defines(b.code, name))
        .map(([, decl]) => decl);
      const file = path.join(dir, `block-${i}.ts`);
      fs.writeFileSync(file, `${preamble.join('\n')}\n${b.code}\nexport {};\n`);
      return file;
    });
    const program = ts.createProgram(files, {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
      skipLibCheck: true,
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const i = d.file ? files.indexOf(d.file.fileName) : -1;
      const at = i >= 0 ? (found[i] as { where: string }).where : (d.file?.fileName ?? '');
      return `${at}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
    expect(problems).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
