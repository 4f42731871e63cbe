// Stock locations of the sandbox distributor: two main warehouses, a damages store, and per route a van with a
// good-stock (-G) and a bad-stock (-B) location.

export interface SyntheticLocation {
  code: string;
  kind: 'main' | 'damages' | 'van';
  stock_condition: 'good' | 'bad' | null;
  name: string;
  /** The route code whose van this is. */
  routeCode: string | null;
}

export function syntheticLocations(routeCodes: string[]): SyntheticLocation[] {
  return [
    { code: 'M01', kind: 'main', stock_condition: null, name: 'Kampala main warehouse (Nalukolongo)', routeCode: null },
    { code: 'M02', kind: 'main', stock_condition: null, name: 'Jinja main warehouse', routeCode: null },
    { code: 'D01', kind: 'damages', stock_condition: null, name: 'Damages store, Kampala', routeCode: null },
    ...routeCodes.flatMap((routeCode): SyntheticLocation[] => [
      {
        code: vanCode(routeCode, 'G'),
        kind: 'van',
        stock_condition: 'good',
        name: `Van ${routeCode} - good stock`,
        routeCode,
      },
      {
        code: vanCode(routeCode, 'B'),
        kind: 'van',
        stock_condition: 'bad',
        name: `Van ${routeCode} - bad stock`,
        routeCode,
      },
    ]),
  ];
}

export function vanCode(routeCode: string, condition: 'G' | 'B'): string {
  return `V_${routeCode}-${condition}`;
}
