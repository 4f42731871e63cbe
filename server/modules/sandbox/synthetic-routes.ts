// The sandbox distributor's routes, one per town its outlets are in, each worked by one salesperson.
import { TOWNS } from './synthetic-outlets.js';
import { picker, SANDBOX_SEED, seededRandom } from './seeded-random.js';

export interface SyntheticRoute {
  route_code: string;
  name: string;
  /** The town (customers' address city) whose outlets the route serves. */
  city: string;
  salesperson: { salesman_code: string; name: string; phone: string };
}

const FIRST_NAMES = ['Joseph', 'Sarah', 'Moses', 'Esther', 'Brian', 'Harriet', 'Ivan', 'Prossy', 'Denis', 'Agnes'];
const LAST_NAMES = [
  'Mukasa',
  'Nansubuga',
  'Okot',
  'Tumusiime',
  'Kiggundu',
  'Akello',
  'Byaruhanga',
  'Nalwoga',
  'Odongo',
  'Kyomuhendo',
];

export function syntheticRoutes(seed = SANDBOX_SEED + 2): SyntheticRoute[] {
  const random = seededRandom(seed);
  const pick = picker(random);
  return TOWNS.map((town, i) => {
    const number = String(i + 1).padStart(2, '0');
    return {
      route_code: `R${number}`,
      name: town.district === town.city ? town.city : `${town.city} - ${town.district}`,
      city: town.city,
      salesperson: {
        salesman_code: `SM${number}`,
        name: `${pick(FIRST_NAMES)} ${pick(LAST_NAMES)}`,
        phone: `+256 7${String(Math.floor(random() * 100)).padStart(2, '0')} ${String(Math.floor(random() * 1e6)).padStart(6, '0')}`,
      },
    };
  });
}
