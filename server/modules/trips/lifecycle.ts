// A trip's lifecycle as a transition table (server/domain/documents/transitions.ts): loading -> in_transit ->
// returned -> closed. `load` is a move from loading to loading: it changes no status, but its guarded UPDATE
// (`... AND status = 'loading'`) refuses a load that races a departure, and it writes the load's event.
import { defineTransitions } from '../../domain/documents/transitions.js';

export type TripStatus = 'loading' | 'in_transit' | 'returned' | 'closed';
export type TripCommand = 'load' | 'depart' | 'return' | 'close';
export type TripEvent = 'trip.loaded' | 'trip.departed' | 'trip.returned' | 'trip.closed';

export const TRIP_STATUSES: readonly TripStatus[] = ['loading', 'in_transit', 'returned', 'closed'];

export const tripLifecycle = defineTransitions<TripStatus, TripCommand, TripEvent>('trip', 'loading', {
  loading: [
    { command: 'load', to: 'loading', event: 'trip.loaded' },
    { command: 'depart', to: 'in_transit', event: 'trip.departed' },
  ],
  in_transit: [{ command: 'return', to: 'returned', event: 'trip.returned' }],
  returned: [{ command: 'close', to: 'closed', event: 'trip.closed' }],
  closed: [],
});
