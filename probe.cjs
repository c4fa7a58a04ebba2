const { readFileSync } = require("node:fs");
const { TypeRegistry, Metadata } = require('@polkadot/types');
const registry = new TypeRegistry();
const hex = readFileSync('/work/shared/fixtures/bittensor/finney-metadata-v14.hex', 'utf8').trim();
const metadata = new Metadata(registry, hex);
registry.setMetadata(metadata, undefined, { SubtensorTransactionExtension: { extrinsic: {}, payload: {} }, DrandPriority: { extrinsic: {}, payload: {} } });
const p = metadata.asLatest.pallets.find((p)=>p.name.eq('Commitments'));
console.log('pallet index', p.index.toNumber());
for (let i = 0; i < 5; i++) { try { const fn = registry.findMetaCall(new Uint8Array([p.index.toNumber(), i])); console.log(i, fn.section, fn.method, fn.meta.args.map((a)=>`${a.name}:${a.type}`)); } catch {} }
const def = registry.lookup.getSiType(p.errors.unwrap().type);
console.log(def.def.asVariant.variants.map((v) => `${v.index}:${v.name}`).join(' '));
const fn = registry.findMetaCall(new Uint8Array([p.index.toNumber(), 0]));
const m = fn({ toNumber: () => 13 } && 13, { fields: [{ Raw40: new Uint8Array(40).fill(0x61) }] });
console.log(JSON.stringify(m.toHuman()), m.toHex());
console.log(registry.createType('Call', m.toHex()).toHuman());
