import { runGateway } from './gateway';

// The production entry point (`npm run start:prod`, NODE_ENV=production unless set; the
// Docker image): the gateway alone. `npm start` runs
// src/devnet/start-with-devnet.ts instead, which adds the simulated devnet in development.
runGateway();
