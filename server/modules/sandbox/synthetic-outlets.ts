// Believable, deterministic outlets for the sandbox: the same seed always gives the same distributor.
import type { ColumnsOf } from '../../platform/resources/table.js';

type CustomerColumns = Required<ColumnsOf<'customers'>>;
import { picker, SANDBOX_SEED, seededRandom } from './seeded-random.js';

export { seededRandom } from './seeded-random.js';

const NAMES = [
  'Mama Grace',
  'Nakato',
  'Kato',
  'Ssemwanga',
  'Achieng',
  'Okello',
  'Namubiru',
  'Mugisha',
  'Atim',
  'Wasswa',
  'Nabirye',
  'Opio',
];
const KINDS = ['Shop', 'Bar', 'Supermarket', 'Kiosk', 'Wholesalers', 'Restaurant', 'Hotel', 'Mini Mart'];
const CHANNEL_OF: Record<string, string> = {
  Shop: 'retail',
  Bar: 'horeca',
  Supermarket: 'supermarket',
  Kiosk: 'kiosk',
  Wholesalers: 'wholesale',
  Restaurant: 'horeca',
  Hotel: 'horeca',
  'Mini Mart': 'retail',
};
export const TOWNS = [
  { city: 'Kampala', district: 'Kampala Central', region: 'Central', lat: 0.3136, lng: 32.5811 },
  { city: 'Entebbe', district: 'Wakiso', region: 'Central', lat: 0.0512, lng: 32.4637 },
  { city: 'Jinja', district: 'Jinja', region: 'Eastern', lat: 0.4244, lng: 33.2042 },
  { city: 'Mbarara', district: 'Mbarara', region: 'Western', lat: -0.6072, lng: 30.6545 },
  { city: 'Gulu', district: 'Gulu', region: 'Northern', lat: 2.7724, lng: 32.2881 },
];
export const PRICE_GROUPS = ['RETAIL-A', 'RETAIL-B', 'WHOLESALE'];

export function syntheticOutlets(count: number, seed = SANDBOX_SEED): CustomerColumns[] {
  const random = seededRandom(seed);
  const pick = picker(random);
  return Array.from({ length: count }, (_, i) => {
    const kind = pick(KINDS);
    const town = pick(TOWNS);
    const credit = random() < 0.6;
    const digits = () => String(Math.floor(random() * 1e9)).padStart(9, '0');
    return {
      outlet_code: `UG${String(1_000_001 + i * 7).padStart(7, '0')}`,
      name: `${pick(NAMES)} ${kind}`,
      status: random() < 0.92 ? 'active' : pick(['inactive', 'blocked']),
      channel: CHANNEL_OF[kind]!,
      price_group: kind === 'Wholesalers' ? 'WHOLESALE' : pick(PRICE_GROUPS.slice(0, 2)),
      route_id: null,
      credit_limit_amount: credit ? String(Math.round(random() * 40 + 5) * 50_000) : null,
      credit_limit_currency: credit ? 'UGX' : null,
      payment_terms_days: credit ? pick([7, 14, 30]) : 0,
      address: {
        line1: `Plot ${1 + Math.floor(random() * 200)}, ${pick(['Main', 'Market', 'Station', 'Church', 'Kampala'])} Road`,
        line2: null,
        city: town.city,
        district: town.district,
        country: 'UG',
      },
      region: town.region,
      phone: `+256 7${digits().slice(0, 2)} ${digits().slice(0, 6)}`,
      tax_id: random() < 0.5 ? `10${digits().slice(0, 8)}` : null,
      gps_latitude: (town.lat + (random() - 0.5) * 0.1).toFixed(6),
      gps_longitude: (town.lng + (random() - 0.5) * 0.1).toFixed(6),
      contact: { name: `${pick(NAMES)} ${pick(['Nakato', 'Kato', 'Achieng', 'Okello'])}`, phone: null, email: null },
    };
  });
}
