// Every link between the project's own documents leads somewhere: the file exists, inside the
// repository, and a `#section` names a heading (or an `<a id>`) of that file as GitHub renders it.
// A section removed or renamed with links still pointing at it fails here.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const ROOT = path.resolve(__dirname, '..', '..');

const documents = (): string[] =>
  execFileSync('git', ['ls-files', '*.md'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && !f.startsWith('node_modules/'));

/** The text outside fenced code blocks: where a `#` line is a heading. */
const withoutFences = (text: string): string => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');

/** The text outside fenced code blocks and inline code spans: where a `[..](..)` is a link. */
const prose = (text: string): string => withoutFences(text).replace(/`+[^`\n]*`+/g, '');

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen; repeats get -1, -2. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading = ''] of withoutFences(text).matchAll(/^#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$/gm)) {
    const base = heading
      .replace(/<[^>]+>/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id = ''] of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id);
  return anchors;
}

/** The targets of a document's links that are not to the web or mail. */
function localLinks(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('links between the documents', () => {
  const files = documents();
  const anchors = new Map(files.map((f) => [f, anchorsOf(fs.readFileSync(path.join(ROOT, f), 'utf8'))]));

  it('finds the documents and their links', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/performance.md', 'docs/operations.md']));
    expect(files.flatMap((f) => localLinks(fs.readFileSync(path.join(ROOT, f), 'utf8'))).length).toBeGreaterThan(100);
  });

  it.each(documents())('%s: every link leads to a file of the repository and a section of it', (file) => {
    const broken: string[] = [];
    for (const target of localLinks(fs.readFileSync(path.join(ROOT, file), 'utf8'))) {
      const [where, section] = target.split('#', 2);
      const resolved = where ? path.normalize(path.join(path.dirname(file), decodeURI(where))) : file;
      if (resolved.startsWith('..') || path.isAbsolute(resolved)) {
        broken.push(`${target}: outside the repository`);
        continue;
      }
      if (!fs.existsSync(path.join(ROOT, resolved))) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (section === undefined || !resolved.endsWith('.md')) continue;
      if (!anchors.get(resolved)?.has(decodeURIComponent(section))) broken.push(`${target}: no such section in ${resolved}`);
    }
    expect(broken).toEqual([]);
  });
});

describe('anchorsOf', () => {
  it('makes anchors as GitHub does', () => {
    const a = anchorsOf(
      '# Performance\n## Slow-disk mode: what each delay stands for\n### `GET /items/{TrackID}`\n## Notes\n## Notes\n## Clients in C#\n## Closed ##\n<a id="the-rows"></a>',
    );
    expect([...a]).toEqual([
      'performance',
      'slow-disk-mode-what-each-delay-stands-for',
      'get-itemstrackid',
      'notes',
      'notes-1',
      'clients-in-c',
      'closed',
      'the-rows',
    ]);
  });

  it('skips headings and links in code', () => {
    expect([...anchorsOf('```\n# not a heading\n```\n# Yes')]).toEqual(['yes']);
    expect(localLinks('see [a](a.md#x) and `[b](b.md)`\n```\n[c](c.md)\n```\n[web](https://x.org) [mail](mailto:a@b)')).toEqual(['a.md#x']);
  });
});
