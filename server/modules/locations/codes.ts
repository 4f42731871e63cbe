// What a location code says about the location: `M…` main warehouse, `D…` damages store, `V_<route>-G` /
// `V_<route>-B` a van's good / bad stock (the DMS numbering). The spec's pattern has already checked the form.

export type LocationKind = 'main' | 'damages' | 'van';
export type StockCondition = 'good' | 'bad';

export interface LocationCodeMeaning {
  kind: LocationKind;
  stockCondition: StockCondition | null;
}

export function meaningOfCode(code: string): LocationCodeMeaning {
  if (code.startsWith('V_')) return { kind: 'van', stockCondition: code.endsWith('-B') ? 'bad' : 'good' };
  return { kind: code.startsWith('D') ? 'damages' : 'main', stockCondition: null };
}
