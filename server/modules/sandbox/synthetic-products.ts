// The sandbox distributor's catalogue: about 40 beverages and the empties (crates, returnable bottles) that
// travel with them. Empties are products too (isEmpty, a deposit, no tax); a returnable case lists the crate
// and bottles it carries. Fixed data: the seed only varies prices (synthetic-prices.ts).

export interface SyntheticEmpty {
  /** The empty's product code. */
  productCode: string;
  quantity: number;
  per: 'case' | 'bottle';
}

export interface SyntheticProduct {
  product_code: string;
  name: string;
  brand: string | null;
  category: string;
  status: 'active' | 'inactive' | 'discontinued';
  pack_size: number;
  selling_units: ('case' | 'bottle' | 'piece')[];
  tracks_stock: boolean;
  tax_rate: string;
  is_empty: boolean;
  /** Deposit per unit of an empty, whole shillings; null for beverages. */
  deposit_amount: string | null;
  empties: SyntheticEmpty[];
  /** Price of one case to the WHOLESALE group before rounding (beverages only). */
  baseCasePrice: number;
}

const EMPTIES: SyntheticProduct[] = [
  empty('900101', 'Crate 24 x 300ml (soda)', 'piece', 8_000),
  empty('900102', 'Bottle 300ml returnable (soda)', 'bottle', 500),
  empty('900201', 'Crate 24 x 500ml (beer)', 'piece', 10_000),
  empty('900202', 'Bottle 500ml returnable (beer)', 'bottle', 1_000),
];

const SODA_GLASS = [
  { productCode: '900101', quantity: 1, per: 'case' },
  { productCode: '900102', quantity: 24, per: 'case' },
] as const;
const BEER_GLASS = [
  { productCode: '900201', quantity: 1, per: 'case' },
  { productCode: '900202', quantity: 24, per: 'case' },
] as const;

/** [code, name, brand, category, pack size, unit besides case, empties, wholesale case price]. */
type Line = [string, string, string, string, number, 'bottle' | 'piece', readonly SyntheticEmpty[], number];

const BEVERAGES: Line[] = [
  ['100101', 'Kola Fresh Cola 300ml RGB', 'Kola Fresh', 'Soft Drinks', 24, 'bottle', SODA_GLASS, 16_500],
  ['100102', 'Kola Fresh Orange 300ml RGB', 'Kola Fresh', 'Soft Drinks', 24, 'bottle', SODA_GLASS, 16_500],
  ['100103', 'Kola Fresh Lemon 300ml RGB', 'Kola Fresh', 'Soft Drinks', 24, 'bottle', SODA_GLASS, 16_500],
  ['100104', 'Citra Pineapple 300ml RGB', 'Citra', 'Soft Drinks', 24, 'bottle', SODA_GLASS, 16_000],
  ['100105', 'Citra Passion 300ml RGB', 'Citra', 'Soft Drinks', 24, 'bottle', SODA_GLASS, 16_000],
  ['100106', 'Tangawizi Gold Ginger 300ml RGB', 'Tangawizi Gold', 'Soft Drinks', 24, 'bottle', SODA_GLASS, 17_000],
  ['100107', 'Kola Fresh Tonic 300ml RGB', 'Kola Fresh', 'Soft Drinks', 24, 'bottle', SODA_GLASS, 17_000],
  ['100201', 'Kola Fresh Cola 500ml PET', 'Kola Fresh', 'Soft Drinks', 12, 'bottle', [], 18_000],
  ['100202', 'Kola Fresh Orange 500ml PET', 'Kola Fresh', 'Soft Drinks', 12, 'bottle', [], 18_000],
  ['100203', 'Kola Fresh Lemon 500ml PET', 'Kola Fresh', 'Soft Drinks', 12, 'bottle', [], 18_000],
  ['100204', 'Citra Pineapple 500ml PET', 'Citra', 'Soft Drinks', 12, 'bottle', [], 17_500],
  ['100205', 'Tangawizi Gold Ginger 500ml PET', 'Tangawizi Gold', 'Soft Drinks', 12, 'bottle', [], 18_500],
  ['100301', 'Kola Fresh Cola 1.5L PET', 'Kola Fresh', 'Soft Drinks', 12, 'bottle', [], 42_000],
  ['100302', 'Kola Fresh Orange 1.5L PET', 'Kola Fresh', 'Soft Drinks', 12, 'bottle', [], 42_000],
  ['100303', 'Citra Pineapple 1.5L PET', 'Citra', 'Soft Drinks', 12, 'bottle', [], 41_000],
  ['200101', 'Kagera Lager 500ml RGB', 'Kagera', 'Beer', 24, 'bottle', BEER_GLASS, 72_000],
  ['200102', 'Kagera Lite 500ml RGB', 'Kagera', 'Beer', 24, 'bottle', BEER_GLASS, 70_000],
  ['200103', 'Ssese Stout 500ml RGB', 'Ssese', 'Beer', 24, 'bottle', BEER_GLASS, 78_000],
  ['200104', 'Mpanga Pilsner 500ml RGB', 'Mpanga', 'Beer', 24, 'bottle', BEER_GLASS, 74_000],
  ['200105', 'Mpanga Export 500ml RGB', 'Mpanga', 'Beer', 24, 'bottle', BEER_GLASS, 76_000],
  ['200201', 'Kagera Lager 330ml Can', 'Kagera', 'Beer', 24, 'piece', [], 84_000],
  ['200202', 'Ssese Stout 330ml Can', 'Ssese', 'Beer', 24, 'piece', [], 90_000],
  ['200203', 'Mpanga Pilsner 330ml Can', 'Mpanga', 'Beer', 24, 'piece', [], 86_000],
  ['200204', 'Ssese Malt 330ml Can', 'Ssese', 'Malt Drinks', 24, 'piece', [], 60_000],
  ['300101', 'Elgon Springs Still Water 500ml', 'Elgon Springs', 'Water', 24, 'bottle', [], 14_000],
  ['300102', 'Elgon Springs Still Water 1L', 'Elgon Springs', 'Water', 12, 'bottle', [], 13_000],
  ['300103', 'Elgon Springs Still Water 1.5L', 'Elgon Springs', 'Water', 12, 'bottle', [], 16_000],
  ['300104', 'Elgon Springs Sparkling Water 500ml', 'Elgon Springs', 'Water', 24, 'bottle', [], 20_000],
  ['400101', 'Tropic Mango Juice 1L', 'Tropic', 'Juice', 12, 'bottle', [], 54_000],
  ['400102', 'Tropic Orange Juice 1L', 'Tropic', 'Juice', 12, 'bottle', [], 54_000],
  ['400103', 'Tropic Apple Juice 1L', 'Tropic', 'Juice', 12, 'bottle', [], 56_000],
  ['400104', 'Tropic Mixed Fruit Juice 1L', 'Tropic', 'Juice', 12, 'bottle', [], 54_000],
  ['400201', 'Tropic Mango Juice 300ml', 'Tropic', 'Juice', 24, 'bottle', [], 30_000],
  ['400202', 'Tropic Passion Juice 300ml', 'Tropic', 'Juice', 24, 'bottle', [], 30_000],
  ['500101', 'Volt Energy Original 250ml Can', 'Volt', 'Energy Drinks', 24, 'piece', [], 60_000],
  ['500102', 'Volt Energy Sugar Free 250ml Can', 'Volt', 'Energy Drinks', 24, 'piece', [], 62_000],
];

/** The catalogue: empties first (the beverages refer to them), then the beverages. */
export function syntheticProducts(): SyntheticProduct[] {
  return [
    ...EMPTIES,
    ...BEVERAGES.map(
      ([code, name, brand, category, packSize, unit, empties, price]): SyntheticProduct => ({
        product_code: code,
        name,
        brand,
        category,
        status: 'active',
        pack_size: packSize,
        selling_units: ['case', unit],
        tracks_stock: true,
        tax_rate: '18',
        is_empty: false,
        deposit_amount: null,
        empties: empties.map((e) => ({ ...e })),
        baseCasePrice: price,
      }),
    ),
  ];
}

function empty(code: string, name: string, unit: 'piece' | 'bottle', deposit: number): SyntheticProduct {
  return {
    product_code: code,
    name,
    brand: null,
    category: 'Empties',
    status: 'active',
    pack_size: 1,
    selling_units: [unit],
    tracks_stock: true,
    tax_rate: '0',
    is_empty: true,
    deposit_amount: String(deposit),
    empties: [],
    baseCasePrice: 0,
  };
}
