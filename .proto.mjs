import PDFDocument from 'pdfkit';
import * as fontkit from 'fontkit';
import fs from 'node:fs';
const reg = fontkit.create(fs.readFileSync('node_modules/dejavu-fonts-ttf/ttf/DejaVuSans.ttf'));
const bold = fontkit.create(fs.readFileSync('node_modules/dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf'));
function make(stage) {
  return new Promise((res) => {
    const doc = new PDFDocument({ size: [288, 432], margin: 0, font: null, info: { CreationDate: new Date(0) }, compress: true });
    const chunks = [];
    doc.on('data', (c) => chunks.push(c));
    doc.on('end', () => res(Buffer.concat(chunks)));
    if (stage>0) { doc.font(reg);
    for (let i = 0; i < 20; i++) doc.fontSize(8).text('Jürgen Müller Москва line ' + i, 10, 10 + i * 10, { lineBreak: false });
    doc.font(bold);
    doc.fontSize(14).text('UPS GROUND', 10, 300, { lineBreak: false }); }
    for (let i = 0; i < 100; i++) doc.rect(10 + i * 2, 350, 1, 50);
    doc.fill('black');
    doc.end();
  });
}
for (const stage of [1]) {
let t = [];
for (let i = 0; i < 1000; i++) { const t0 = performance.now(); const b = await make(stage); t.push(performance.now() - t0); }
console.log(stage, [0,50,100,150,200,250,299].map(i=>t[i].toFixed(2)).join(' '));
}
