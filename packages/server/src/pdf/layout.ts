// The signed reports' PDF layout, one for every report the service renders (period reports,
// report-pdf.ts; incident reports, governance/incident-pdf.ts): an A4 document with headings,
// paragraphs and one-line table rows, its colours, and the finished bytes.
import PDFDocument from 'pdfkit';

export const INK = '#1f2933';
export const MUTED = '#616e7c';
export const ACCENT = '#2f6fd6';
export const BAD = '#c0392b';
export const GOOD = '#2e7d32';

export interface PdfLayout {
  pdf: PDFKit.PDFDocument;
  /** The text width between the margins. */
  width: number;
  h1(text: string): void;
  /** A section heading; a new page when the page is nearly full. */
  h2(text: string): void;
  p(text: string, color?: string): void;
  /** One table row of single-line cells (cut with an ellipsis); a new page when needed. */
  row(cells: string[], widths: number[], bold?: boolean): void;
  /** Ends the document: its bytes. */
  finish(): Promise<Buffer>;
}

export function pdfLayout(info: { title: string; subject: string }, rowFontSize = 9): PdfLayout {
  const pdf = new PDFDocument({ size: 'A4', margin: 50, info: { Title: info.title, Author: 'audit-ledger', Subject: info.subject } });
  const chunks: Buffer[] = [];
  pdf.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve) => pdf.on('end', () => resolve(Buffer.concat(chunks))));
  const width = pdf.page.width - 100;
  return {
    pdf,
    width,
    h1: (t) => void pdf.fillColor(INK).font('Helvetica-Bold').fontSize(18).text(t, { width }).moveDown(0.3),
    h2: (t) => {
      if (pdf.y > pdf.page.height - 150) pdf.addPage();
      pdf.moveDown(0.8).fillColor(ACCENT).font('Helvetica-Bold').fontSize(13).text(t).moveDown(0.2).fillColor(INK).font('Helvetica').fontSize(10);
    },
    p: (t, color = INK) => void pdf.fillColor(color).font('Helvetica').fontSize(10).text(t, { width }).fillColor(INK),
    row: (cells, widths, bold = false) => {
      if (pdf.y > pdf.page.height - 80) pdf.addPage();
      const y = pdf.y;
      let x = 50;
      pdf.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(rowFontSize);
      cells.forEach((c, i) => {
        pdf.text(c, x, y, { width: (widths[i] ?? 100) - 6, lineBreak: false, ellipsis: true });
        x += widths[i] ?? 100;
      });
      pdf.x = 50;
      pdf.y = y + 13;
    },
    finish: () => {
      pdf.end();
      return done;
    },
  };
}
