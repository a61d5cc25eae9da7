const {tableFromIPC}=require('apache-arrow');const fs=require('fs');
for (const f of process.argv.slice(2)) {
  const t=tableFromIPC(fs.readFileSync(f)); const c=t.getChild('text_items'); const counts=[];
  for (let i=0;i<t.numRows;i++){const v=c.get(i); counts.push(v?v.length:0);}
  counts.sort((a,b)=>a-b);
  console.log(f.split('/').slice(-4).join('/'),'rows',t.numRows,'median',counts[counts.length>>1],'p90',counts[Math.floor(counts.length*0.9)],'max',counts[counts.length-1],'>48:',counts.filter(n=>n>48).length);
}
