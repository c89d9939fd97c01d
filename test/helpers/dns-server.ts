// A real DNS server for tests (dns2, over UDP): it answers from a small zone given by the test, so the
// service's look-ups go over the wire exactly as they would to a production resolver. A name not in the
// zone is NXDOMAIN; a name in it without records of the asked type is an empty NOERROR answer (NODATA);
// a `silent` name is never answered, as a name server that has gone away.
import dns2 from 'dns2';

export interface ZoneEntry {
  mx?: string[];
  a?: string[];
  aaaa?: string[];
  silent?: boolean;
}

export interface DnsTestServer {
  /** `127.0.0.1:<port>`, for MAILER_EMAIL_VALIDATION_NAMESERVERS */
  address: string;
  /** every question asked, as `<name> <TYPE>` */
  questions: string[];
  close(): Promise<void>;
}

const { Packet } = dns2;
const RCODE_NXDOMAIN = 3;
const TYPE_NAMES: Record<number, string> = { [Packet.TYPE.A]: 'A', [Packet.TYPE.AAAA]: 'AAAA', [Packet.TYPE.MX]: 'MX' };

/** The fields of dns2's packets that its type declarations leave out. */
type Question = { name: string; type: number };
type Response = dns2.DnsResponse & { header: { rcode: number } };

export async function startDnsServer(zone: Record<string, ZoneEntry>): Promise<DnsTestServer> {
  const questions: string[] = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request) as Response;
      const [question] = request.questions as Question[];
      if (!question) return send(response);
      const name = question.name.toLowerCase().replace(/\.$/, '');
      questions.push(`${name} ${TYPE_NAMES[question.type] ?? question.type}`);
      const entry = zone[name];
      if (entry?.silent) return;
      if (!entry) {
        response.header.rcode = RCODE_NXDOMAIN;
        return send(response);
      }
      const record = { name: question.name, class: Packet.CLASS.IN, ttl: 60 };
      if (question.type === Packet.TYPE.MX) {
        entry.mx?.forEach((exchange, i) =>
          response.answers.push({ ...record, type: Packet.TYPE.MX, exchange, priority: 10 * (i + 1) } as never),
        );
      } else if (question.type === Packet.TYPE.A) {
        for (const address of entry.a ?? []) response.answers.push({ ...record, type: Packet.TYPE.A, address });
      } else if (question.type === Packet.TYPE.AAAA) {
        for (const address of entry.aaaa ?? []) response.answers.push({ ...record, type: Packet.TYPE.AAAA, address });
      }
      send(response);
    },
  });
  await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return {
    address: `127.0.0.1:${server.addresses().udp?.port}`,
    questions,
    close: () => server.close(),
  };
}
