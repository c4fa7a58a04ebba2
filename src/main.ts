import { runGateway } from './gateway';

// The production entry point (`node dist/src/main.js`): the gateway alone. `npm start` runs
// src/devnet/start-with-devnet.ts instead, which adds the simulated devnet in development.
runGateway();
