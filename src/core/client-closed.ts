/** The abort reason when the caller went away: nothing is answered, the upstream call stops. */
export class ClientClosedError extends Error {
  constructor() {
    super('The client closed the connection.');
    this.name = 'ClientClosedError';
  }
}
